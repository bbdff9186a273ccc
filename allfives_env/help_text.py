"""Help texts for the command lines, made from docstrings without their markup.

A module's docstring is written for readers of the code, in reST: ``code``,
:mod:`agents.play`. A person asking a command for ``--help`` reads plain
text, so every command line that shows a docstring passes it through
:func:`plain_help` first, and its parser keeps the paragraphs
(``argparse.RawDescriptionHelpFormatter``). ``tests/test_cli_help.py`` reads
every command's help for leftover markup.
"""

from __future__ import annotations

import inspect
import re

# :mod:`agents.play`, :class:`~allfives_env.core.SeatView` (a tilde keeps the last name only), :ref:`text <target>`
_ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`(~?)([^`<]*?)\s*(?:<[^>`]*>)?`")
_CODE = re.compile(r"``(.+?)``|`([^`\n]+)`", re.DOTALL)


def plain_help(doc: str | None) -> str:
    """``doc`` as plain text: reST roles and code quotes taken out, indentation and paragraphs kept.

    None (docstrings stripped by ``python -OO``) gives "".
    """
    if not doc:
        return ""
    text = _ROLE.sub(lambda m: m[2].rpartition(".")[2] if m[1] else m[2], inspect.cleandoc(doc))
    return _CODE.sub(lambda m: m[1] if m[1] is not None else m[2], text)
