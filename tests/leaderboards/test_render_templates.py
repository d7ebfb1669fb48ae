"""The leaderboard's one renderer (Jinja2 templates of leaderboards/templates) and the main page's forest plot.

Hostile names, authors, descriptions and urls are rendered in every format and read back with a
parser (a Markdown table split on its unescaped pipes, HTML through html.parser): each text comes
back as written, as text, and no markup of it survives. The forest plot has one row per entry in
rank order, its point at the score and its bar over the interval.
"""

import html
import re
import tomllib
from html.parser import HTMLParser
from pathlib import Path

import pytest

from leaderboards import figures
from leaderboards import render as render_module
from leaderboards.render import board_rows, environment, md_escape, render_html, render_markdown
from leaderboards.site import write_site
from tests.leaderboards.test_render import PREDICTION, SCHEDULING, _entry

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = ["<script>alert(1)</script>", "a|b", "line1\nline2", "say \"hi\" & 'bye'", "`code` *em* _u_ [x](y) ~s~ \\",
           r"$\undefined{x}$ cost", "日本語モデル", "&amp; already", "<img src=x onerror=alert(2)>"]
HOSTILE_URL = "https://x.org/?a=1&b=<2>)|\"'"


def _hostile(track):
    rows = []
    for i, name in enumerate(HOSTILE):
        e = (_entry(name, cov25=0.30 + 0.02 * i, rmsle=1.0, url=HOSTILE_URL, half=0.001) if track == "prediction"
             else _entry(name, "scheduling", score=0.5 + 0.05 * i, half=0.001))
        e["authors"] = ["<b>Ann</b>", "O'Brien | x"]
        e["description"] = "desc <i>x</i>\nline & more"
        rows.append(e)
    return rows


# ----- Markdown -------------------------------------------------------------------------------------
def _md_cells(line):
    return [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]


def _md_text(cell):
    """What a Markdown renderer shows of an escaped cell: backslash escapes and entities undone."""
    return html.unescape(re.sub(r"\\(.)", r"\1", cell))


def test_markdown_cells_of_hostile_names_read_back_as_written():
    md = render_markdown({"prediction": _hostile("prediction"), "scheduling": _hostile("scheduling")})
    assert "<" not in md and ">" not in md.replace("&gt;", "")  # no raw tag of any text survives
    assert not re.search(r"(?<!\\)`", md)  # no backtick opens code
    for track in ("prediction", "scheduling"):
        part = md[md.index(f"## {track.capitalize()} track"):]
        lines = part.splitlines()
        header = _md_cells(next(line for line in lines if line.startswith("| # |")))
        rows = [_md_cells(line) for line in lines if re.match(r"^\| (=?\d+|ref|–) \|", line)][:len(HOSTILE)]
        assert all(len(row) == len(header) for row in rows)  # a '|' or newline in a text never adds a cell
        names = []
        for row in rows:
            cell = dict(zip(header, row))
            link = re.fullmatch(r"\[(.*)\]\((\S*)\)", cell["Name"])
            if track == "prediction":  # linked to its url, percent-encoded: the link ends where it should
                assert link and link.group(2) == "https://x.org/?a=1&b=%3C2%3E%29%7C%22%27"
            names.append(_md_text(link.group(1) if link else cell["Name"]))
            assert _md_text(cell["Authors"]) == "<b>Ann</b>, O'Brien | x"
        assert sorted(names) == sorted(" ".join(n.split()) for n in HOSTILE)  # newlines read as one space


def test_markdown_escapes_every_value_unless_trusted():
    """The Markdown environment escapes every {{ value }}, as HTML autoescape does: a template that
    forgets a filter still cannot let a text out raw."""
    md = environment("md")
    assert md.from_string("{{ x }}").render(x="a|b\n`c` <i>") == r"a\|b \`c\` &lt;i&gt;"
    assert md.from_string("{{ x|trusted }}").render(x="ΣC_j vs blind") == "ΣC_j vs blind"
    assert md.from_string("{{ x|md_url }}").render(x="https://x.org/a)b c") == "https://x.org/a%29b%20c"
    assert environment("html").from_string("{{ x }}").render(x="<a href=\"x\">'") == "&lt;a href=&#34;x&#34;&gt;&#39;"
    assert md_escape("a  \n b|c") == r"a b\|c"
    assert md_escape("$x^2$ costs $5") == r"\$x^2\$ costs \$5"  # rendered as a formula when left bare
    # no template switches escaping off
    for template in (ROOT / "leaderboards" / "templates").glob("*.j2"):
        text = template.read_text()
        assert "|safe" not in text and "autoescape false" not in text, template.name


def test_markdown_dataset_line_is_escaped():
    """The dataset's source comes from the entry file: escaped like every other text (it was not)."""
    e = _entry("x", cov25=0.4, rmsle=1.0)
    e["dataset"] = dict(e["dataset"], source="my_data|<b>")
    md = render_markdown({"prediction": [e]})
    assert r"_dataset my\_data\|&lt;b&gt; (default), fingerprint" in md


# ----- HTML -----------------------------------------------------------------------------------------
class _Page(HTMLParser):
    """Every element and attribute of a page, and the text of each <td>, <title>, <h1>, <p> and svg <text>."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.tags, self.attrs, self.texts, self._open = [], [], {"td": [], "title": [], "h1": [], "p": [], "text": []}, []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += [(tag, k, v) for k, v in attrs]
        if tag in self.texts:
            self._open.append((tag, []))

    def handle_endtag(self, tag):
        if self._open and self._open[-1][0] == tag:
            name, parts = self._open.pop()
            self.texts[name].append("".join(parts))

    def handle_data(self, data):
        for _, parts in self._open:
            parts.append(data)


def _no_markup_from_texts(page: _Page, scripts: int):
    assert page.tags.count("script") == scripts
    assert not [a for a in page.attrs if a[1].startswith("on")]  # no event handler attribute
    assert {t for t in page.tags} <= {"html", "head", "meta", "title", "style", "link", "body", "h1", "h2", "h3", "p",
                                      "em", "strong", "section", "table", "thead", "tbody", "tr", "th", "td", "a",
                                      "ul", "li", "img", "script", "figure", "figcaption", "svg", "metadata",
                                      "rdf:rdf", "cc:work", "dc:type", "dc:format", "dc:creator", "cc:agent",
                                      "dc:title", "defs", "g", "path", "use", "text", "clippath", "rect"}


def test_html_page_shows_hostile_texts_as_text():
    page = render_html({"prediction": PREDICTION + _hostile("prediction"), "scheduling": _hostile("scheduling")})
    parsed = _Page(page)
    _no_markup_from_texts(parsed, scripts=0)
    for name in HOSTILE:
        assert parsed.texts["td"].count(name) == 2  # its Name cell on both tracks, exactly as written
    assert parsed.texts["td"].count("<b>Ann</b>, O'Brien | x") == 2 * len(HOSTILE)
    assert ("a", "href", HOSTILE_URL) in parsed.attrs  # the url, whole, as the link's target


def test_site_pages_show_hostile_texts_as_text(tmp_path):
    index = write_site({"prediction": PREDICTION + _hostile("prediction"), "scheduling": SCHEDULING + _hostile("scheduling")},
                       tmp_path / "site")
    parsed = _Page(index.read_text())
    _no_markup_from_texts(parsed, scripts=1)
    ids = [v for _, k, v in parsed.attrs if k == "id"]
    assert len(ids) == len(set(ids)) and len(ids) > 10  # the two inline figures repeat no id
    assert ("script", "src", "sort.js") in parsed.attrs
    for name in HOSTILE:
        assert parsed.texts["td"].count(name) == 2
    # the forest plots' labels are the names as text ('$…$' is not math; a newline splits a label in two)
    labels = [t for t in parsed.texts["text"] if re.match(r"^(=?\d+|ref)  ", t)]
    for name in HOSTILE:
        if "\n" not in name:
            assert sum(label.split("  ", 1)[1] == name for label in labels) == 2, name
    for page in (tmp_path / "site" / "entries").rglob("*.html"):
        entry_page = _Page(page.read_text())
        _no_markup_from_texts(entry_page, scripts=0)
        name = entry_page.texts["h1"][0]
        assert entry_page.texts["title"] == [f"{name} — ATLAS-Bench"]
        if name in HOSTILE:
            assert "desc <i>x</i>\nline & more" in entry_page.texts["p"]
            assert f"<b>Ann</b>, O'Brien | x — {page.parent.name} track" in entry_page.texts["p"]
            if "prediction" in page.parts:
                assert f"Project: {HOSTILE_URL}" in entry_page.texts["p"] and ("a", "href", HOSTILE_URL) in entry_page.attrs
    # the entry page of a name that is mathtext to matplotlib has its ratio plot (the old site crashed on it)
    assert list((tmp_path / "site" / "entries" / "scheduling").glob("undefined-x-cost-*-ratios.png"))


# ----- the forest plot ------------------------------------------------------------------------------
def _ticks(fig):
    return [t.get_text() for t in fig.axes[0].get_yticklabels()]


@pytest.mark.parametrize("track, entries, scale", [("prediction", PREDICTION, 100.0), ("scheduling", SCHEDULING, 1.0)])
def test_forest_plot_rows_in_rank_order(track, entries, scale):
    rows = board_rows(entries, track)
    fig = figures.forest_figure(rows, track)
    shown = [r for r in rows if r.score is not None]
    expected = {"prediction": ["1  best", "=2  tie-better-rmsle", "=2  mid", "ref  oracle"],
                "scheduling": ["1  s-better", "2  s-worse", "ref  s-oracle"]}[track]
    assert _ticks(fig) == expected  # the unscored entry is not drawn
    ax = fig.axes[0]
    assert ax.get_ylim()[0] > ax.get_ylim()[1]  # the first row (rank 1) on top
    bars = [line for line in ax.get_lines() if len(line.get_xdata()) == 2 and line.get_ydata()[0] == line.get_ydata()[1]]
    points = [line for line in ax.get_lines() if len(line.get_xdata()) == 1]
    for y, row in enumerate(shown):
        assert [list(b.get_xdata()) for b in bars if b.get_ydata()[0] == y] == [[scale * row.interval[0], scale * row.interval[1]]]
        assert [list(p.get_xdata()) for p in points if p.get_ydata()[0] == y] == [[scale * row.score]]
    assert figures.forest_figure([r for r in rows if r.score is None], track) is None


def test_forest_svg_keeps_names_as_escaped_text_with_ids_per_figure():
    rows = board_rows(_hostile("scheduling"), "scheduling")
    text, element = figures.forest_svg(figures.forest_figure(rows, "scheduling"), salt="a")
    assert text.startswith("<?xml") and element.startswith("<svg") and element.endswith("</svg>")
    assert "<script" not in element and "&lt;script&gt;alert(1)&lt;/script&gt;" in element
    assert "$\\undefined{x}$ cost</text>" in element  # as written, not math
    other = figures.forest_svg(figures.forest_figure(rows, "scheduling"), salt="b")[1]
    ids = lambda svg: set(re.findall(r'id="([^"]+)"', svg)) - {"figure_1", "axes_1", "patch_1", "patch_2"}  # noqa: E731
    clip_or_marker = {i for i in ids(element) if re.fullmatch(r"[mp][0-9a-f]{10}", i)}
    assert clip_or_marker and not clip_or_marker & ids(other)  # two figures inlined in one page share no reference


def test_the_one_page_html_has_the_sites_forest_plot(tmp_path):
    """`--format html` shows each board's forest plot inline, the same figure as the site's main page."""
    page = render_html({"scheduling": SCHEDULING, "prediction": PREDICTION})
    parsed = _Page(page)
    assert page.count('<figure class="forest"') == 2 and parsed.tags.count("svg") == 2
    site = _Page(write_site({"scheduling": SCHEDULING, "prediction": PREDICTION}, tmp_path / "site").read_text())
    labels = [t for t in parsed.texts["text"] if "  " in t]
    assert labels and labels == [t for t in site.texts["text"] if "  " in t]  # every row's label, in the same order
    assert "ref  s-oracle" in labels and "1  s-better" in labels


def test_board_rows_is_the_one_place_ranks_are_read(monkeypatch, tmp_path):
    """Markdown, HTML, the site's table and its figure all take the rows from board_rows."""
    original = render_module.board_rows
    monkeypatch.setattr(render_module, "board_rows", lambda *a, **k: list(reversed(original(*a, **k))))
    md = render_markdown({"scheduling": SCHEDULING})
    assert [_md_cells(line)[1] for line in md.splitlines() if re.match(r"^\| (=?\d+|ref|–) \|", line)] == [
        "s-oracle", "s-none", "s-worse", "s-better"]
    page = render_html({"scheduling": SCHEDULING})
    assert page.index(">s-oracle<") < page.index(">s-better<")
    parsed = _Page(write_site({"scheduling": SCHEDULING}, tmp_path / "site").read_text())
    assert [t for t in parsed.texts["text"] if "  s-" in t] == ["ref  s-oracle", "2  s-worse", "1  s-better"]


def test_templates_ship_with_the_package():
    """Every template is package data (pyproject), loaded through the package, not the checkout's path."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["leaderboards"]
    package = ROOT / "leaderboards"
    shipped = {p for pattern in patterns for p in package.glob(pattern)}
    templates = sorted((package / "templates").glob("*"))
    assert len(templates) >= 6 and all(t in shipped for t in templates)
    assert {d.split(">")[0] for d in config["project"]["dependencies"]} >= {"jinja2", "markupsafe"}
    for t in templates:
        environment("md" if t.name.endswith(".md.j2") else "html").get_template(t.name)  # each one parses


def test_each_dataset_has_its_own_figure(tmp_path):
    """One forest plot per board, even for two fingerprints alike in the characters a file name keeps."""
    a = _entry("on-a", cov25=0.4, rmsle=1.0)
    b = _entry("on-b", cov25=0.5, rmsle=1.0, fp="ab" * 6 + "cd" * 26, default=False)
    index = write_site({"prediction": [a, b]}, tmp_path / "site").read_text()
    boards = re.findall(r'<figure class="forest" data-board="([^"]+)">', index)
    assert boards == ["prediction-abababababab", "prediction-abababababab-2"]
    files = [tmp_path / "site" / "figures" / f"forest-{b}.svg" for b in boards]
    assert sorted((tmp_path / "site" / "figures").iterdir()) == sorted(files)
    assert "on-a</text>" in files[0].read_text() and "on-b</text>" in files[1].read_text()
