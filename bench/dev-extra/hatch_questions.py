"""Hand-written questions on the Hatch 1.18.2 docs (the ``hatch`` retrieval dev set).

Read by build_hatch_questions.py (the bench's Markdown question builder, run on this file):
Q = [(question, answers, evidence, file, chapter, section)], ``file`` relative to the docs
folder, ``chapter`` the file's first ``# `` heading, ``section`` the heading path above the
evidence below that, joined with " › " (None when the evidence precedes the page's first
sub-heading). UNANSWERABLE = [question, ...] and UNANSWERABLE_TERMS, one key term per question,
none of which occurs in the docs (whole word, any case).

Passages were drawn with a seeded random pick of sections (draw_hatch_sections.py: 30 equal
shares of the docs' prose, one section each, weighted by length; see README.md for the four
shares whose first draw was not used) and the questions were written without running any
search on them.
"""

Q = [
    # share 1: build.md
    ("We build wheels for every OS in CI with cibuildwheel. If the project moves its build "
     "backend to Hatch, does the cibuildwheel setup need changes?",
     ["without any extra modification"],
     "they both will transparently use Hatch without any extra modification",
     "build.md", "Builds", "Packaging ecosystem"),
    # share 2 (third draw: the first two fell in the list of users): config/build.md
    ("Some generated files are in our .gitignore, but they must ship in the sdist. Hatch leaves "
     "them out of the archive. How do I stop it from honouring the ignore file?",
     ["`ignore-vcs`"],
     "Set `ignore-vcs` to `true` to disable this behavior",
     "config/build.md", "Build configuration", "File selection › VCS"),
    # share 3: config/build.md
    ("src layout: my code is in src/foo, but I want the wheel to contain foo/ at the top level, "
     "not src/foo/. Which setting does that?",
     ["`packages` option", 'packages = ["src/foo"]'],
     "the shipped path will be collapsed to only include the final component",
     "config/build.md", "Build configuration", "File selection › Explicit selection › Packages"),
    # share 4: config/dependency.md
    ('For a requirement like "click>=7, <9, != 8.0.0", does a version have to satisfy all the '
     "comma-separated parts, or is any one of them enough?",
     ["logical `AND` operator"],
     "The comma is equivalent to a logical `AND` operator",
     "config/dependency.md", "Dependency configuration", "Version specifiers"),
    # share 5: config/dependency.md
    ("pywin32 should only be installed for Windows users of my package. How do I write a "
     "dependency in pyproject.toml that only applies on one operating system?",
     ["Environment markers", 'platform_system == "Windows"'],
     "allow for dependencies to only be installed when certain conditions are met",
     "config/dependency.md", "Dependency configuration", "Environment markers"),
    # share 6: config/environment/advanced.md
    ("I put a Python version matrix on my default env and the generated envs are just called "
     "3.11 and 3.12, while the matrix on my test env gives test.3.11. Why the difference?",
     ["not be prefixed by the environment name"],
     "then the generated names will not be prefixed by the environment name",
     "config/environment/advanced.md", "Advanced environment configuration",
     "Matrix › Naming › Default environment"),
    # share 7: config/environment/advanced.md
    ("In an env option I use an inline table with both a platform condition and an env-var "
     "condition on one entry. Is the entry applied when only one of them holds?",
     ["skipped"],
     "any negative evaluation will immediately cause the entry to be skipped",
     "config/environment/advanced.md", "Advanced environment configuration",
     "Option overrides › Conditions"),
    # share 8: config/environment/overview.md
    ("My experimental environment is the default env plus one more package. Do I really have to "
     "copy the whole dependency list into it?",
     ["`extra-dependencies`"],
     "you can use the `extra-dependencies` option to avoid redeclaring the `dependencies` option",
     "config/environment/overview.md", "Environment configuration", "Dependencies"),
    # share 9: config/environment/sources.md
    ("During development I want hatch to install our shared library from a checkout in "
     "./packages/foo instead of PyPI, but the wheels we release must keep depending on the "
     "published foo. How?",
     ["`sources` table", 'foo = "./packages/foo"'],
     "redirects dependencies to alternative origins at install time without changing your "
     "project's published metadata",
     "config/environment/sources.md", "Environment sources", None),
    # share 10: config/hatch.md
    ("Where does hatch look for its own user settings file on a Mac, and can I make it read one "
     "from somewhere else?",
     ["`~/Library/Application Support/hatch`", "`HATCH_CONFIG`"],
     "You can select a custom path to the file using the `--config`",
     "config/hatch.md", "Hatch configuration", None),
    # share 11: config/hatch.md
    ("I'd like the virtualenvs of all my projects to live under ~/.virtualenvs rather than "
     "hatch's data folder. What do I put in the config?",
     ["[dirs.env]", 'virtual = "~/.virtualenvs"'],
     "This determines where to store environments, with every key being the",
     "config/hatch.md", "Hatch configuration", "Directories › Environments"),
    # share 12: config/internal/testing.md
    ("I changed what hatch test runs by overriding the run script of its environment, but when I "
     "add --cover my change is ignored. Why?",
     ["`run-cov`", "`cov-combine`"],
     "the `run-cov` script is used instead when measuring code coverage",
     "config/internal/testing.md", "Testing configuration", "Customize environment › Scripts"),
    # share 13 (second draw: the first, environment creation, is word for word in the tutorial
    # too): environment.md
    ("In a CI job every hatch command should use the 'ci' environment and I'm tired of adding "
     "-e ci everywhere. Can I set it once?",
     ["`HATCH_ENV`", "`-e`/`--env`"],
     "You can select which environment to enter or run commands in by using the",
     "environment.md", "Environments", "Selection"),
    # share 14: how-to/config/dynamic-metadata.md
    ("My custom metadata hook sets metadata['classifiers'] to a plain string because there's "
     "just one classifier, and the build fails. What type should it be?",
     ["use `list` for TOML arrays"],
     "if a list is expected, it is required even if there is a single element",
     "how-to/config/dynamic-metadata.md", "How to configure custom dynamic metadata",
     "Implement hook"),
    # share 15: how-to/environment/lockfiles.md
    ("I only want to bump one package in the lockfile of the environment I'm working in (picked "
     "with -e). Which command is that, and does it take --upgrade-package?",
     ["`--upgrade-package`", "shorthand for `hatch dep lock`"],
     "same resolver options as `env lock` where applicable",
     "how-to/environment/lockfiles.md", "How to use lockfiles",
     "Generating lockfiles › `hatch dep lock` and `hatch lock` (active environment)"),
    # share 16: how-to/environment/lockfiles.md
    ("My dev environment isn't set to be locked, but I still want a lock file of it written to "
     "locks/dev.lock. Possible?",
     ["`--export`"],
     "To generate a lockfile for an environment that is not configured with",
     "how-to/environment/lockfiles.md", "How to use lockfiles", "Exporting lockfiles"),
    # share 17: how-to/integrate/vscode.md
    ("VS Code doesn't discover any of my Hatch environments, though hatch works fine in my "
     "terminal. I installed it with pipx on Linux.",
     ["`$HOME/.local/bin`", "for your graphical session"],
     "might need to add `$HOME/.local/bin` to your PATH environment variable",
     "how-to/integrate/vscode.md", "How to use Hatch environments from Visual Studio Code", None),
    # share 18: how-to/static-analysis/behavior.md
    ("I made hatch check code run flake8 through the hatch-check-code environment, but adding "
     "--fix changes nothing. Which script do I have to define for fix mode?",
     ["`*-fix` scripts", "lint-fix"],
     "The `*-fix` scripts run when `--fix` is passed, while the `*-check` scripts run by default",
     "how-to/static-analysis/behavior.md", "Customize static analysis behavior", None),
    # share 19: index.md
    ("how much faster is the hatch cli than comparable tools",
     ["up to 3x faster"],
     "Hatch is up to 3x faster than equivalent tools",
     "index.md", "Hatch", None),
    # share 20: install.md
    ("How can I install hatch on our Windows machines from a script, without anyone clicking "
     "through the installer?",
     ["`/passive`", "msiexec"],
     "parameters to request an unattended, normal installation",
     "install.md", "Installation", "Installers"),
    # share 21: plugins/about.md
    ("I wrote an environment plugin and return the class from hatch_register_environment. What "
     "decides the name users put in type = \"...\" to pick it?",
     ["`PLUGIN_NAME`"],
     "Every class must define an attribute called `PLUGIN_NAME` that users will select",
     "plugins/about.md", "Plugins", "Overview"),
    # share 22: plugins/builder/binary.md
    ("I need the binary build target to cross-compile with cross instead of plain cargo. How do "
     "I tell hatch to use it, and is anything else required?",
     ["`CARGO`", "`PYAPP_REPO`"],
     "If the `CARGO` environment variable is set then that path will be used",
     "plugins/builder/binary.md", "Binary builder", "Build behavior"),
    # share 23: plugins/environment/virtual.md
    ("Why is the folder of my default environment named after my project instead of 'default'? "
     "My shell prompt shows the project name.",
     ["normalized project name"],
     "the name of the directory for the `default` environment will be the normalized project name",
     "plugins/environment/virtual.md", "Virtual environment", "Location"),
    # share 24 (second draw: the first, the default locker, is stated in three pages):
    # plugins/metadata-hook/reference.md
    ("Our dependencies live in requirements.txt and I don't want to repeat them in "
     "pyproject.toml. Is there a plugin that feeds them into the project metadata?",
     ["hatch-requirements-txt"],
     "read project dependencies from `requirements.txt` files",
     "plugins/metadata-hook/reference.md", "Metadata hook plugins", "Known third-party"),
    # share 25: tutorials/environment/basic-usage.md
    ("How can I list the environments hatch has for this project together with the packages "
     "each one installs?",
     ["`env show`", "hatch env show"],
     "to see both the currently created environments and the dependencies in each environment",
     "tutorials/environment/basic-usage.md", "Managing environments",
     "View current environments"),
    # share 26: tutorials/python/manage.md
    ("Another tool wants the directory that holds the Python hatch installed for me, not the path "
     "of the python3 binary. How do I print that?",
     ["`-p`/`--parent` flag", "hatch python find 3.12 --parent"],
     "You can instead output its parent directory by using the",
     "tutorials/python/manage.md", "Managing Python distributions", "Finding installations"),
    # share 27: version.md
    ("Our package stores its version as BUILD = 'b1.4.2' in pkg/__init__.py and hatch version "
     "can't read it. How do I tell hatch what the line looks like?",
     ["`pattern` option", "named group called `version`"],
     "you can define a different regular expression using the `pattern` option",
     "version.md", "Versioning", "Configuration"),
    # share 28: why.md
    ("We compile C extension modules in our package. Is moving from setuptools to hatchling a "
     "good idea for us?",
     ["continue using setuptools"],
     "If building extension modules is required then it is recommended that you continue using "
     "setuptools",
     "why.md", "Why Hatch?", "Build backend"),
    # share 29 (third draw: the first two repeat share 28's section): why.md
    ("We use nox and one session triggers a follow-up session with notify. Would porting that "
     "to hatch environments be one-to-one?",
     ["redesign that conditional step"],
     "then migration wouldn't be a straight translation but rather you might have to redesign",
     "why.md", "Why Hatch?", "Environment management"),
    # share 30: why.md
    ("can hatch install an exact python patch version like 3.11.4 or only the newest 3.11",
     ["minor release granularity"],
     "Hatch does not allow for the installation of specific patch release versions",
     "why.md", "Why Hatch?", "Python management"),
]

# For the verifier: one key term per unanswerable question, none of which occurs in the docs
# (whole-word, case-insensitive).
UNANSWERABLE_TERMS = ["sigstore", "Pipfile", "Dependabot", "devcontainer", "Debian"]

UNANSWERABLE = [
    "How do I sign my wheels and sdist with sigstore before uploading them with hatch publish?",
    "We still have a Pipfile from pipenv. Can hatch import it into an environment's dependencies?",
    "How do I get Dependabot to open PRs that bump the dependencies in my hatch environments?",
    "is there a devcontainer config for working on a hatch project in github codespaces",
    "How can I turn my Hatch-built application into a Debian .deb package?",
]
