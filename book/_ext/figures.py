"""Sphinx extension: every figure's image gets alt text that says what it shows.

myst-nb writes a glued figure's hashed file name as its alt text, which is what a screen reader then
reads.  A figure without an explicit ``:alt:`` takes the first sentence of its caption (the caption
says what the figure shows, see the notebooks' ``{glue:figure}`` blocks); an explicit ``:alt:`` wins.
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx.transforms import SphinxTransform

_HASHED = re.compile(r"^[0-9a-f]{16,}\.\w+$|\.(png|svg|jpe?g)$", re.IGNORECASE)


def caption_alt(caption: str, limit: int = 250) -> str:
    """The first sentence of ``caption`` (whitespace collapsed), at most ``limit`` characters."""
    text = " ".join(caption.split())
    first = re.split(r"(?<=[.:;])\s+(?=[A-Z])", text, maxsplit=1)[0].rstrip(".:;")
    return first if len(first) <= limit else first[:limit - 1].rsplit(" ", 1)[0] + "…"


def needs_alt(image: nodes.image) -> bool:
    alt = image.get("alt", "")
    return not alt or bool(_HASHED.search(alt)) or alt == image.get("uri", "")


class FigureAlt(SphinxTransform):
    default_priority = 800

    def apply(self, **kwargs):
        for figure in self.document.findall(nodes.figure):
            captions = list(figure.findall(nodes.caption))
            if not captions:
                continue
            for image in figure.findall(nodes.image):
                if needs_alt(image):
                    image["alt"] = caption_alt(captions[0].astext())


def setup(app):
    app.add_post_transform(FigureAlt)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
