"""``ledger review``: a git range as the evidence sees it (lines by blame status, intents and
scope, governance on the way, evidence soundness), and its renderings and CI gate.

The layer sits beside the query and export layers: it reads blame's projections, the
governance fold and the evidence, and nothing below imports it.
"""

from __future__ import annotations

from ledger._review.build import GROUPINGS, REVIEW_VERSION, build_review
from ledger._review.html import render_review_html
from ledger._review.render import (
    COMMENT_LIMIT,
    FailOn,
    no_agent_line,
    parse_fail_on,
    render_review_markdown,
    render_review_sarif,
    render_review_text,
    review_failures,
)

__all__ = [
    "COMMENT_LIMIT",
    "GROUPINGS",
    "REVIEW_VERSION",
    "FailOn",
    "build_review",
    "no_agent_line",
    "parse_fail_on",
    "render_review_html",
    "render_review_markdown",
    "render_review_sarif",
    "render_review_text",
    "review_failures",
]
