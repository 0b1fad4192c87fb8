"""Hand-written questions on the PyMdown Extensions 13.1.2 docs (the ``pymdown`` retrieval dev set).

Read by build_pymdown_questions.py (the bench's Markdown question builder, run on this file):
Q = [(question, answers, evidence, file, chapter, section)], ``file`` relative to the docs
folder, ``chapter`` the file's first ``# `` heading, ``section`` the heading path above the
evidence below that, joined with " › " (None when the evidence precedes the page's first
sub-heading). UNANSWERABLE = [question, ...] and UNANSWERABLE_TERMS, one key term per question,
none of which occurs in the docs (whole word, any case).

Passages were drawn with a seeded random pick of sections (draw_pymdown_sections.py: 30 equal
shares of the docs' prose, one section each, weighted by length; see README.md for the four
shares whose first draw was not used) and the questions were written without running any
search on them.
"""

Q = [
    # share 1: about/contributing.md
    ("Besides a monthly GitHub sponsorship, is there a way for our company to make a one-off "
     "donation to the PyMdown Extensions project?",
     ["PayPal"],
     "We also accept one time contributions via PayPal.",
     "about/contributing.md", "Contributing &amp; Support",
     "Become a Sponsor :octicons-heart-fill-16:{: .heart-throb}"),
    # share 2 (second draw: the first, the overview, is restated by Input Format and Loading
    # KaTeX): extensions/arithmatex.md
    ("Does arithmatex ship MathJax itself, or do I have to add MathJax to my pages on my own?",
     ["use the CDN"],
     "Arithmatex requires you to provide the MathJax library and provide and configure it",
     "extensions/arithmatex.md", "Arithmatex", "Loading MathJax"),
    # share 3: extensions/blocks/api.md
    ("I'm writing my own /// block type. Do I still implement extendMarkdown in the extension "
     "class, like for any other Python-Markdown extension?",
     ["`extendMarkdownBlocks`"],
     "we do not override the `extendMarkdown` method, but instead override "
     "`extendMarkdownBlocks`",
     "extensions/blocks/api.md", "Blocks Extension API", "Block Extension Anatomy"),
    # share 4: extensions/blocks/api.md
    ("My custom block returns 'raw' from on_markdown, yet HTML inside the block still gets "
     "processed and the output comes out wrong. What am I missing?",
     ["indented 4 spaces"],
     "must be indented 4 spaces to avoid the HTML processing step",
     "extensions/blocks/api.md", "Blocks Extension API", "`on_markdown` Event"),
    # share 5: extensions/blocks/index.md
    ("In a /// block I put attrs: {class: wide} on the line after the header, but it ends up as "
     "text in the output. How are per-block options supposed to be written?",
     ["indented at least four spaces"],
     "The options also must be indented at least four spaces.",
     "extensions/blocks/index.md", "Blocks", "Syntax"),
    # share 6: extensions/blocks/plugins/caption.md
    ("Captions sit under figures by default, which is fine, except for one image whose caption "
     "should go above it. Can I do that without touching the global setting?",
     ["`<`"],
     "you can force prepend or append per block by specifying",
     "extensions/blocks/plugins/caption.md", "Caption", "Usage › Prepending Captions"),
    # share 7 (second draw: the first, the details block's `open` option, is explained in the
    # page's usage section too): extensions/blocks/plugins/definition.md
    ("We're moving our glossary from def_list to the new blocks-based definition extension. Can "
     "I keep both enabled while the pages are converted one by one?",
     ["not meant to be used together"],
     "is meant to replace `def_list`, they are not meant to be used together",
     "extensions/blocks/plugins/definition.md", "Definition", None),
    # share 8: extensions/blocks/plugins/html.md
    ("I inject some JavaScript with a /// html | script block and the end of the script is "
     "missing from the generated page. Why?",
     ["must be indented"],
     "If content is not indented, the content may be missing at the end.",
     "extensions/blocks/plugins/html.md", "HTML", "Usage"),
    # share 9: extensions/caret.md
    ("With the caret extension, how do I write a superscript that contains several words, like "
     "^a superscript^?",
     ["escape the spaces", "`no_space`"],
     "if your superscript needs to have spaces, you must escape the spaces",
     "extensions/caret.md", "Caret", "Superscript"),
    # share 10: extensions/emoji.md
    ("Why are the emojione images from the emoji extension stuck on the old 2.2.7 release? Can "
     "I get the current JoyPixels artwork instead?",
     ["license is too restrictive"],
     "graphical assets will not be supported moving forward as the license is too restrictive",
     "extensions/emoji.md", "Emoji", "Default Emoji Indexes"),
    # share 11: extensions/emoji.md
    ("We use the gemoji index (GitHub's emoji names) and want SVG images rather than PNGs. Will "
     "the SVG output work with it?",
     ["only supported for Twemoji"],
     "SVG output is only supported for Twemoji and the older 2.2.7 EmojiOne set",
     "extensions/emoji.md", "Emoji", "Default Emoji Generators"),
    # share 12 (second draw: the first, function references in MkDocs' YAML, is answered by the
    # FAQ too): extensions/emoji.md
    ("My own emoji generator builds image file names from the uc argument and it crashes on "
     ":octocat: because uc is None. Is that a bug?",
     ["`None` for `uc`"],
     "Gemoji ships with some non-standard emoji like `:octocat:` that do not have Unicode code "
     "points",
     "extensions/emoji.md", "Emoji", "Custom Emoji Generators"),
    # share 13: extensions/fancylists.md
    ("With fancylists my uppercase lettered list 'A. First point' is not turned into a list, it "
     "stays a paragraph. How do capital-letter items have to be written?",
     ["two spaces after the marker"],
     "will require two spaces after the marker instead of the usual 1",
     "extensions/fancylists.md", "FancyLists", "Syntax › Ordered List Rules"),
    # share 14 (second draw: each point of the first, Syntax Highlighting, is in the page's
    # options table too): extensions/highlight.md
    ("With CodeHilite I could put :::python on the first line of an indented code block to pick "
     "its language. Does pymdownx.highlight support that?",
     ["better suited in fenced code blocks"],
     "chooses not to implement special language headers for standard Markdown code blocks",
     "extensions/highlight.md", "Highlight", "Overview"),
    # share 15: extensions/highlight.md
    ("I set linenums to False in the highlight config and now linenums=\"1\" on single fences does "
     "nothing. How do I get line numbers only on the blocks that ask for them?",
     ["`#!py3 None`"],
     "disabled globally and can not be turned on, not even per code block",
     "extensions/highlight.md", "Highlight", "Options"),
    # share 16: extensions/inlinehilite.md
    ("I need inline code that literally begins with #!/usr/bin/env, but InlineHilite takes it "
     "as a language marker. How do I escape that?",
     ["put a space before it"],
     "put a space before it, and it will be treated as part of the code",
     "extensions/inlinehilite.md", "InlineHilite", "Overview"),
    # share 17: extensions/keys.md
    ("Our app has a 'Hyper' key that the keys extension doesn't know about. How can I make "
     "++hyper+k++ render with a proper label?",
     ["`key_map`"],
     "you can feed in your keys via the `key_map` option",
     "extensions/keys.md", "Keys", "Extending/Modifying Key-Map Index"),
    # share 18: extensions/magiclink.md
    ("magiclink is set up for GitHub. How do I @-mention someone's GitLab account instead?",
     ["`@{provider}:{user}`"],
     "To reference a provider other than your default, use the format",
     "extensions/magiclink.md", "MagicLink", "Shorthand Links › Mentions"),
    # share 19: extensions/magiclink.md
    ("I'd like the GitLab and GitHub issue links that magiclink produces to get different icons "
     "from CSS. Does the HTML give me anything to hook on to?",
     ["`magiclink-gitlab`", "`magiclink-issue`"],
     "an additional class will be added for each repository link type and provider",
     "extensions/magiclink.md", "MagicLink", "CSS"),
    # share 20: extensions/progressbar.md
    ("I wrote [=45%]{: .thin} to get a slim progress bar, but the {: .thin} part is printed "
     "literally. What's missing?",
     ["`attr_list`"],
     "`markdown.extensions.attr_list` must be enabled for the following to work",
     "extensions/progressbar.md", "ProgressBar", "Overview"),
    # share 21: extensions/quotes.md
    ("How do I write a GitHub/Obsidian style > [!note] callout that starts out collapsed?",
     ["`-` (closed)"],
     "just add `+` (open) or `-` (closed) immediately after the class specifier",
     "extensions/quotes.md", "Quotes", "Callouts"),
    # share 22: extensions/snippets.md
    ("Does the snippets extension follow symbolic links that sit in its base path, and how do I "
     "stop it?",
     ["will be followed", "do not place them in the restricted path"],
     "Symlinks can be placed in the Snippets path and will be followed",
     "extensions/snippets.md", "Snippets", "Specifying Snippet Locations"),
    # share 23: extensions/snippets.md
    ("A typo in a --8<-- include path silently produces nothing in the page. Can I make the "
     "build error out instead?",
     ["`check_paths`"],
     "Make the build fail if a snippet can't be found.",
     "extensions/snippets.md", "Snippets", "Options"),
    # share 24: extensions/superfences.md
    ("In a fenced block I want a line number shown only on every other line. I tried "
     "linenums=\"2\" but that just starts counting at 2.",
     ['linenums="1 2"'],
     "so you must specify line start before line step",
     "extensions/superfences.md", "SuperFences", "Showing Line Numbers"),
    # share 25: extensions/superfences.md
    ("I want every line number of my code blocks to carry an anchor id I can link to, but I "
     "don't want the numbers rendered as clickable links. Possible?",
     ["`line_anchors`", "omit enabling `anchor_linenums`"],
     "just have the anchors inserted, you can omit enabling `anchor_linenums`",
     "extensions/superfences.md", "SuperFences", "Pygments Line Anchors and Spans"),
    # share 26: extensions/superfences.md
    ("After adding a grid tables extension my SuperFences code blocks break. Are the two "
     "compatible?",
     ["probably not work"],
     "It will probably not work with other extensions such as Grid Tables",
     "extensions/superfences.md", "SuperFences", "Limitations"),
    # share 27: extensions/tabbed.md
    ("I enabled pymdownx.tabbed but with my own HTML theme every tab's content is shown one "
     "after another, with radio buttons. What am I missing?",
     ["additional CSS"],
     "In order to use tabbed blocks, some additional CSS is needed.",
     "extensions/tabbed.md", "Tabbed", "Styling with CSS"),
    # share 28: extensions/tasklist.md
    ("With custom checkboxes turned on for task lists, which element do I target in my "
     "stylesheet to draw my own check mark?",
     ["`task-list-indicator`"],
     "directly following the input and is used to style the visual indicator",
     "extensions/tasklist.md", "Tasklist", "Styling with CSS"),
    # share 29: extras/mermaid.md
    ("Mermaid diagrams placed in a collapsed details block or a tab that isn't selected come out "
     "tiny or broken. How do the pymdown docs get around this?",
     ["custom loader", "surrogate element"],
     "we attach a surrogate element to it and render the diagram there",
     "extras/mermaid.md", "Advanced Mermaid Notes", "Custom Loader"),
    # share 30: extras/slugs.md
    ("I want heading ids without accents (résumé becomes resume) using pymdownx.slugs. Which "
     "parameter does that?",
     ["`normalize`", "`NFD`"],
     "For instance, `NFD` will strip diacritics, but `NFC` does not.",
     "extras/slugs.md", "Slugs", "Using Slugify"),
]

# For the verifier: one key term per unanswerable question, none of which occurs in the docs
# (whole-word, case-insensitive).
UNANSWERABLE_TERMS = ["Jira", "Sphinx", "AsciiMath", "PDF", "WCAG"]

UNANSWERABLE = [
    "Can magiclink turn references like PROJ-123 into links to our Jira tickets?",
    "How do I use these extensions in a Sphinx project that parses Markdown with MyST?",
    "does arithmatex accept AsciiMath notation as well as LaTeX",
    "What's the best way to export a page written with pymdownx extensions to PDF?",
    "Do the tabbed blocks meet WCAG accessibility requirements for keyboard and screen reader "
    "users?",
]
