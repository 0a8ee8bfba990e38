"""The figures and run-dependent prose of the book's chapters, one module per notebook.

A chapter's notebook runs the experiments (through :mod:`fdp`), records the numbers the paper prints and glues
what this package draws and writes from them: each function here takes numbers the run computed and returns a
figure, the rows of a table or a "What we see" paragraph in Markdown.  Nothing here runs an experiment.  A
sentence that depends on the outcome is chosen here, so that a rerun with other parameters writes prose that agrees
with its own figures, and a reader who opens the notebook meets the steps of the chapter, not its typesetting.  A
module may also say how long its chapter will run (``estimate``: timed probes of the library calls, scaled to the
work the parameters ask for).
"""


def see(sentences) -> str:
    """A "What we see" paragraph from its sentences."""
    return "**What we see.** " + " ".join(sentences)


def and_list(words) -> str:
    """"a", "a and b", "a, b and c"."""
    words = list(words)
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
