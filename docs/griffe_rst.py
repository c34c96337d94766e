"""Griffe extension for the API pages: turn the Sphinx roles of our numpy-style
docstrings (``:func:`~graphclust.merge.contract```, ``:class:`Problem```, ...) into
Markdown code spans, so the pages read ``contract`` instead of the raw role."""

import re

import griffe

# :role:`target` or :role:`~dotted.target` (the tilde shows only the last component)
_ROLE = re.compile(r":(?:func|class|meth|attr|data|mod|obj|exc|ref):`(~?)([^`]+)`")


def _plain(match):
    tilde, target = match.groups()
    return f"`{target.rsplit('.', 1)[-1] if tilde else target}`"


class RstRoles(griffe.Extension):
    def on_instance(self, *, obj, **kwargs):
        if obj.docstring is not None and ":" in obj.docstring.value:
            obj.docstring.value = _ROLE.sub(_plain, obj.docstring.value)
