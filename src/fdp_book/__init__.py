"""The book's machinery, kept apart from the numerics (which never import it).

* :mod:`fdp_book.paths` -- where the repository's data, results and errata are;
* :mod:`fdp_book.results` -- the results registry: record a number against the paper's value, verify;
* :mod:`fdp_book.page` -- the boxes and tables of a book page, glued into its prose;
* :mod:`fdp_book.plotting` -- one figure style, figures drawn for the book's column;
* :mod:`fdp_book.parameters` -- notebook parameters as papermill passes them.
"""
