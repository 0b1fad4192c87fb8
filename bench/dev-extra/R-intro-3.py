# A third blind set of dev questions for books/R-intro.pdf ("An Introduction to R", R 4.2.2).
# Passages drawn at random (seed 20261204, one per twentieth of pages 7-107 by characters,
# leaving out the paragraphs of books-extra.jsonl's and books-extra-2.jsonl's evidence; see
# bench/dev-extra/README.md) and the questions written blind - before any search was run on
# them - in a reader's own words. Built with ../shared/bench/tools/build_pdf_questions.py.
# Q = [(question, answers, evidence, chapter, section, section_number)]

Q = [
    ("Where did this introduction to R originally come from?",
     ["notes on S and S-Plus written in 1990-2 by Bill Venables and David M. Smith at the "
      "University of Adelaide"],
     "written in 1990–2 by Bill Venables and David M. Smith",
     "Preface", "Preface", None),
    ("Which functions give me the average of a vector, and how is it worked out?",
     ["mean(x), the same as sum(x)/length(x); var(x) gives the variance"],
     "which calculates the sample mean, which is the same as sum(x)/length(x)",
     "2 Simple manipulations; numbers and vectors", "Vector arithmetic", None),
    ("When I glue strings and numbers together with paste, what goes between them?",
     ["numbers are turned into strings as printed, and by default a single blank separates "
      "the pieces"],
     "The arguments are by default separated in the result by a single blank character",
     "2 Simple manipulations; numbers and vectors", "Character vectors", None),
    ("Where does R rely on objects growing automatically to a longer length?",
     ["often, for example in the scan() function for input"],
     "This automatic adjustment of lengths of an object is used often",
     "3 Objects, their modes and attributes", "Changing the length of an object", None),
    ("Is there a more natural way to build an array than assigning to dim()?",
     ["yes: matrix() and array() give simpler, more natural looking assignments"],
     "are available for simpler and more natural looking assignments",
     "5 Arrays and matrices", "Arrays", None),
    ("How do I find out how many rows and columns a matrix has?",
     ["nrow(A) and ncol(A)"],
     "The functions nrow(A) and ncol(A) give the number of rows and columns",
     "5 Arrays and matrices", "Matrix facilities", None),
    ("What kinds of objects can I pass to attach()?",
     ["a 'database' such as a list or a data frame"],
     "function takes a ‘database’ such as a list or data frame",
     "6 Lists and data frames", "attach() and detach()", None),
    ("For R's probability distributions, which letter do I put in front of the name to get "
     "the quantile function or random numbers?",
     ["d for the density, p for the CDF, q for the quantile function, r for simulation"],
     "‘q’ for the quantile function and ‘r’ for simulation (random deviates)",
     "8 Probability distributions", "R as a set of statistical tables", None),
    ("How can I break a vector into groups according to a factor?",
     ["split() produces a list of vectors split by the factor's classes; mostly used with "
      "boxplots"],
     "which produces a list of vectors obtained by splitting a larger vector",
     "9 Grouping, loops and conditional execution",
     "Repetitive execution: for loops, repeat and while", None),
    ("Does this manual explain the rules of where R assignments inside functions are "
     "visible?",
     ["not fully: that needs the notion of an evaluation frame, a somewhat advanced topic not "
      "covered further"],
     "the reader needs to be familiar with the notion of an evaluation frame",
     "10 Writing your own functions", "Assignments within functions", None),
    ("If the site profile, my own profile and .First() all define something, which one wins?",
     ["the last run: the order is Rprofile.site, user profile, .RData, .First(), and later "
      "definitions mask earlier ones"],
     "A definition in later files will mask definitions in earlier files",
     "10 Writing your own functions", "Customizing the environment", None),
    ("When fitting a model, how do I tell R which data frame the variables come from without "
     "attaching it?",
     ["the data = argument, e.g. data = production, whether or not the frame is attached"],
     "This is the case regardless of whether data frame production has been attached",
     "11 Statistical models in R", "Linear models", None),
    ("Is the linear part of a generalized linear model written the same way as for an "
     "ordinary linear model?",
     ["yes, the same mechanism; only the family has to be specified in a different way"],
     "The family has to be specified in a different way",
     "11 Statistical models in R", "The glm() function", None),
    ("What can I use to show the trend in noisy data without assuming a straight line?",
     ["loess(), a locally weighted nonparametric regression in package stats"],
     "fits a nonparametric regression by using a locally weighted regression",
     "11 Statistical models in R", "Some non-standard models", None),
    ("How can I put a mathematical formula into a plot's labels?",
     ["give an expression instead of a character string to text, mtext, axis or title"],
     "This can be achieved in R by specifying an expression rather than a character string",
     "12 Graphical procedures", "Mathematical annotation", None),
    ("Which graphics setting makes the text and symbols in a plot bigger?",
     ["cex, the character expansion relative to the default text size, e.g. cex=1.5"],
     "The value is the desired size of text characters (including plotting characters)",
     "12 Graphical procedures", "Graphical elements", None),
    ("How do I call a function from a particular package when another package hides its "
     "name?",
     ["with the double-colon operator, e.g. base::t; only exported functions"],
     "The double-colon operator :: selects definitions from a particular namespace",
     "13 Packages", "Namespaces", None),
    ("Which file compression formats can R read, and what is the trade-off of the newer "
     "ones?",
     ["gzip (the long-standing compromise), old Unix compress, bzip2 and xz; the last two "
      "compress more but are slower"],
     "at the expense of slower decompression and much slower compression",
     "14 OS facilities", "Compression and Archives", None),
    ("What are R's starting trigger sizes for garbage collection, and can I change them?",
     ["6Mb of vector heap and 350k cons cells by default; set by options or the R_NSIZE and "
      "R_VSIZE environment variables"],
     "The defaults are 6Mb and 350k",
     "B Invoking R", "Invoking R from the command line", None),
    ("What's the recommended way to run a script file of R commands non-interactively?",
     ["R CMD BATCH foo.R (add & on Unix to run it in the background)"],
     "If you just want to run a file foo.R of R commands, the recommended way",
     "B Invoking R", "Scripting with R", None),
]
