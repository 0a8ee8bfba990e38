"""The book's machinery, kept apart from the numerics (which never import it).

* :mod:`fdp.book.paths` -- where the repository's data, results and errata are;
* :mod:`fdp.book.results` -- the results registry: record a number against the paper's value, verify;
* :mod:`fdp.book.page` -- the boxes and tables of a book page, glued into its prose;
* :mod:`fdp.book.plotting` -- one figure style, figures drawn for the book's column;
* :mod:`fdp.book.parameters` -- notebook parameters as papermill passes them.
"""
