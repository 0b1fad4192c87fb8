"""Hand-written questions on the Fastify 5.12.8 docs (the ``fastify`` retrieval dev set).

Read by build_fastify_questions.py (the bench's Markdown question builder, run on this file):
Q = [(question, answers, evidence, file, chapter, section)], ``file`` relative to the docs
folder, ``chapter`` the file's first ``# `` heading (None when it has none: most pages open with
an HTML ``<h1>``), ``section`` the heading path above the evidence below that, joined with " › ".
UNANSWERABLE = [question, ...] and UNANSWERABLE_TERMS, one key term per question, none of which
occurs in the docs (whole word, any case).

Passages were drawn with a seeded random pick of sections (20 in Reference/, 10 in Guides/; see
README.md) and the questions were written without running any search on them.
"""

R = "Reference/"
G = "Guides/"
TS_REQUEST = ("fastify.FastifyRequest< [RequestGeneric][FastifyRequestGenericInterface], "
              "[RawServer][RawServerGeneric], [RawRequest][RawRequestGeneric]>")

Q = [
    # --- Reference/Server.md (84 KB) ---
    ("I want to validate some data by hand with the exact compiled schema checker Fastify uses for "
     "a route. Is there a property on the instance that hands me that function, and why is it "
     "null when I read it right after creating the app?",
     ["`null` until the server starts"],
     "This property can be used to get the schema validator",
     R + "Server.md", None, "Instance › Server Methods › validatorCompiler"),
    ("Our Fastify service is exposed straight to the internet with no nginx in front. A client "
     "that sends its request body really slowly can keep a connection busy forever - what limit "
     "should I set and what is it by default?",
     ["`0` (no limit)", "120 seconds"],
     "It must be set to a non-zero value (e.g. 120 seconds) to protect",
     R + "Server.md", None, "Factory › `requestTimeout`"),
    ("During a rolling deploy, requests that reach a pod after I called app.close() get a 503. Can "
     "I have Fastify keep handling them while it shuts down?",
     ["`503 Service Unavailable`", "`Connection: close`"],
     "requests arriving during the closing phase are routed and processed normally",
     R + "Server.md", None, "Factory › `return503OnClosing`"),
    # --- Reference/Reply.md (34 KB) ---
    ("Inside a handler I need the JSON string exactly as the route's response schema would produce "
     "it, before sending anything (to hash it for an ETag). Is there a helper for that on reply?",
     ["reply.serialize"],
     "which takes into account the response schema for the current status code",
     R + "Reply.md", None, "Reply › Reply › Methods › .serialize(payload)"),
    ("I send a web `Response` object with status 201 from my handler, but in my onSend hook "
     "reply.statusCode still says 200. Is that a bug?",
     ["`readonly` status"],
     "the status code and headers will not directly reflect to `reply.statusCode`",
     R + "Reply.md", None, "Reply › Reply › Methods › .send(data) › Response"),
    # --- Reference/Hooks.md (30 KB) ---
    ("My db pool object implements Symbol.asyncDispose (the new `using` stuff). Can I hand that "
     "object to Fastify so it gets disposed when the server shuts down, instead of writing a "
     "callback?",
     ["`Symbol.asyncDispose`", "Explicit Resource Management"],
     "Fastify invokes the appropriate disposal method when closing the server",
     R + "Hooks.md", None, "Application Hooks › onClose"),
    ("My plugin listens for every new route and registers an extra HEAD-like variant of it from "
     "that listener; now startup never finishes / blows the stack. How do I stop it recursing?",
     ["infinite loop", "kRouteAlreadyProcessed"],
     "The hook will run into an infinite loop if not tagged",
     R + "Hooks.md", None, "Application Hooks › onRoute"),
    # --- Reference/Routes.md (27 KB) ---
    ("I registered my routes plugin with logLevel 'warn' to quiet it down, but fastify.log.info() "
     "calls still print. Expected?",
     ["applies only to routes"],
     "the custom log level applies only to routes, not to the global",
     R + "Routes.md", None, "Routes › Custom Log Level"),
    ("fastify one route for both /posts and /posts/:id, id not required",
     ["question mark", "`undefined`"],
     "The last parameter can be made optional by adding a question mark",
     R + "Routes.md", None, "Routes › Url building"),
    # --- Reference/TypeScript.md (63 KB) ---
    ("In Fastify's TypeScript API reference, each generic such as RawServer lists a type or two "
     "next to it. Is that the type it falls back to, or what it is allowed to be?",
     ["default value", "constraint value(s)"],
     "are documented by their default value as well as their constraint value(s)",
     R + "TypeScript.md", None, "API Type System Documentation"),
    ("TS error: Property 'someProp' does not exist on type FastifyRequest, even though I added it "
     "with decorateRequest. How do I make the compiler know about it?",
     ["declaration merging", "declare module 'fastify'"],
     "need to use declaration merging to add this prop to the request interface",
     R + "TypeScript.md", None, "API Type System Documentation › Request › " + TS_REQUEST
     + " › Example"),
    # --- Reference/Validation-and-Serialization.md (33 KB) ---
    ("We'd like tenants to upload their own JSON schemas and have our Fastify API validate their "
     "requests against them at runtime. Any security problem with that?",
     ["application code", "`new Function()`"],
     "features use `new Function()`, which is unsafe with user-provided schemas",
     R + "Validation-and-Serialization.md", None, "Validation and Serialization"),
    ("After switching to my own Ajv instance via setValidatorCompiler, $ref to schemas I "
     "registered with fastify.addSchema no longer resolve. What changed?",
     ["add schemas to the validator"],
     "Fastify's `addSchema` method will not recognize the custom validator",
     R + "Validation-and-Serialization.md", None,
     "Validation and Serialization › Validation › Validator Compiler"),
    # --- seven other Reference pages, drawn at random ---
    ("A decorator I add inside one registered plugin is undefined in routes registered by the code "
     "that registered that plugin. Can the outer level see what a child plugin set up?",
     ["fastify-plugin"],
     "Parent contexts cannot access entities within their descendant contexts",
     R + "Encapsulation.md", None, "Sharing Between Contexts"),
    ("My DELETE endpoint gets a JSON body from the client but request.body is undefined. POST "
     "works fine with the same payload.",
     ["`content-type` header"],
     "For `OPTIONS` and `DELETE` requests, the payload is parsed only if a valid",
     R + "ContentTypeParser.md", None, "`Content-Type` Parser"),
    ("Fastify prints an FSTWRN warning at every boot that I can't fix right now. Can I mute just "
     "that one and keep the other Node warnings?",
     ["`--disable-warning=FSTWRN004`"],
     "Pass `--disable-warning=FSTWRN004` to disable a specific warning",
     R + "Warnings.md", None, "Warnings › Warnings In Fastify"),
    ("Chrome keeps using HTTP/1.1 with my http2: true server on plain http://localhost. Do I need "
     "certificates for the browser to use h2?",
     ["__only over a secure connection__"],
     "HTTP/2 is supported in all modern browsers __only over a secure connection__",
     R + "HTTP2.md", None, "HTTP/2 › Secure (HTTPS)"),
    ("what is fastify's stance when speed and nice developer features pull in opposite directions",
     ["minimal overhead"],
     "this principle can conflict with providing a great developer experience",
     R + "Principles.md", "Technical Principles", '"Zero" Overhead in Production'),
    ("One of my plugins throws while it loads and I only find out in the listen callback. Where "
     "should I catch a failure of a specific plugin right after registering it?",
     ["`after` or `ready` block"],
     "handle errors in the next `after` or `ready` block, otherwise",
     R + "Plugins.md", None, "Plugins › Plugin Options › Error handling"),
    ("Two of our modules both add a reply.view helper and the app crashes at startup saying the "
     "decorator is already present. Can the same name never be used twice?",
     ["throw an exception"],
     "with the same name more than once in the same **encapsulated** context will throw",
     R + "Decorators.md", None, "Decorators › Decorators and Encapsulation"),
    # --- ten Guides, drawn at random ---
    ("Writing a custom type provider: I return `never` when the schema doesn't match, and now "
     "withTypeProvider gives me an 'is not assignable' error. What should the fallback type be?",
     ["`unknown`", "`FastifyTypeProviderDefault`"],
     "reduction in type provider interfaces should only be done up to `unknown`",
     G + "Write-Type-Provider.md", None,
     "How to write your own type provider › Type Contravariance"),
    ("How much time did the hapi maintainer say fixing that __proto__ JSON parsing vulnerability "
     "cost him?",
     ["20 hours", "$5000"],
     "My time alone on this one issue exceeded 20 hours",
     G + "Prototype-Poisoning.md", None,
     "History behind prototype poisoning › The after in happy ever-after"),
    ("is there a fastify plugin to check an api key plus a signed request (hmac) on incoming calls",
     ["`fastify-api-key`"],
     "plugin to authenticate HTTP requests based on API key and signature",
     G + "Ecosystem.md", None, "Ecosystem › [Community](#community)"),
    ("How do I try my Fastify app deployed as a Google Cloud Function on my laptop before "
     "pushing it?",
     ["@google-cloud/functions-framework", "--target=fastifyFunction"],
     "Then you can run your function locally with Functions Framework",
     G + "Serverless.md", None, "Google Cloud Functions › Local test"),
    ("There's no official Fastify package for Knex. How would I wire a Knex client into the app "
     "myself and make sure it gets destroyed on shutdown?",
     ["fastify.decorate('knex', knex)", "fastify.knex.destroy(done)"],
     "We could write a plugin for a database library too",
     G + "Database.md", None, "Database › Writing plugin for a database library"),
    ("Why put my db client setup inside a register() callback instead of just calling "
     "app.decorate() at the top of server.js? The connection is async.",
     ["asynchronous bootstrapping", "fastify-plugin"],
     "your plugin can support asynchronous bootstrapping *(since `decorate` is a synchronous API)*",
     G + "Plugins-Guide.md", "The hitchhiker's guide to plugins",
     "How to handle encapsulation and distribution"),
    ("After going from Fastify 3 to 4, the route listener hook inside my plugin no longer sees the "
     "routes I add next to it. What changed and how do I fix it?",
     ["wrap your routes in a plugin"],
     "To improve error reporting in route definitions, route registration is now synchronous",
     G + "Migration-Guide-V4.md", "V4 Migration Guide",
     "Breaking Changes › Synchronous route definitions "
     "([#2954](https://github.com/fastify/fastify/pull/2954))"),
    ("Running the hello world with `import Fastify from 'fastify'` gives SyntaxError: Cannot use "
     "import statement outside a module.",
     ['"type": "module"'],
     'be sure to include "type": "module" in your package.json',
     G + "Getting-Started.md", None, "Getting Started › Your first server"),
    ("After upgrading from fastify 2 to 3 my custom `res` log serializer, which reads fields off "
     "the Node response, logs undefined for some of them.",
     ["Any custom serializers must be updated"],
     "Any custom serializers must be updated if they rely upon",
     G + "Migration-Guide-V3.md", "V3 Migration Guide",
     "Breaking changes › Changed logging serialization "
     "([#2017](https://github.com/fastify/fastify/pull/2017))"),
    ("I gate customer routes with an onRequest hook that answers 503 + Retry-After until a secret "
     "is fetched at boot. If I wrap that gate in fp(), my health check route gets blocked too. "
     "Should that wrapper skip fastify-plugin?",
     ["skip-override"],
     "we wanted the `onRequest` hook to only be set within that specific scope",
     G + "Delay-Accepting-Requests.md", "Delay Accepting Requests", "Solution › Hands-on › delay"),
]

# For the verifier: one key term per unanswerable question, none of which occurs in the docs
# (whole-word, case-insensitive).
UNANSWERABLE_TERMS = ["QUIC", "pm2", "sitemap", "gRPC", "nodemon"]

UNANSWERABLE = [
    "Can Fastify serve HTTP/3 over QUIC, and which option turns it on?",
    "Running fastify under pm2 in cluster mode: does every worker need its own port or does pm2 "
    "share one listening socket between them?",
    "Can Fastify generate a sitemap.xml from the registered routes for SEO?",
    "How do I expose a gRPC service next to my Fastify REST routes on the same port?",
    "what nodemon config restarts my fastify server when I edit a route file",
]
