"""Markdown tables of the generated result blocks (README, docs/results.md): one cell format and one
table layout for every command that writes them (demo, value, transfer). Standard library only."""

from __future__ import annotations


def text_cell(value, spec: str = "{:.3f}") -> str:
    """A table cell: `value` in `spec`, or "–" when there is none."""
    return "–" if value is None else spec.format(value)


def markdown_table(header: list[str], lines: list[list[str]]) -> str:
    """A Markdown table: the first column left-aligned, the others right-aligned."""
    rule = ["---"] + ["---:"] * (len(header) - 1)
    return "\n".join("| " + " | ".join(r) + " |" for r in [header, rule, *lines])
