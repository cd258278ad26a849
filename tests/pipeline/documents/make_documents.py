#!/usr/bin/python3
"""Makes the documents the document tests read, with text known in advance, into a folder.

  make_documents.py OUT_DIR

PDFs come from cairo's PDF surface (python3-cairo: text with DejaVu fonts, page labels) and
from ps2pdf (ghostscript); a scanned PDF from pdftoppm + img2pdf; an encrypted one from qpdf;
HTML is written as it is; EPUB, DOCX, ODT, PPTX and ODP are zip packages written with zipfile.
Hostile files (truncated, page-tree loop, decompression bombs, 10,000 pages) are written by hand.
Each expected text is also written as NAME.expected.txt (pages separated by form feeds).
"""
import os
import subprocess
import sys
import zipfile
import zlib

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)


def path(name):
    return os.path.join(OUT, name)


def expect(name, pages):
    with open(path(name + ".expected.txt"), "w", encoding="utf-8") as f:
        f.write("\f".join(pages))


# --- PDFs with cairo ------------------------------------------------------------------------
PAGES = [
    ["The quick brown fox jumps over the lazy dog.",
     "Reel reads documents page by page.",
     "",
     "",
     "A second paragraph follows the blank line."],
    ["Ελληνικά: Η γρήγορη καφέ αλεπού πηδά.",
     "Numbers 12345 and symbols % & @ stay."],
    ["Chapter three ends the sample.",
     "Last line of the document."],
]
LABELS = ["i", "ii", "1"]


def cairo_pdf(name, pages, labels=None, size=(612, 792)):
    import cairo
    surface = cairo.PDFSurface(path(name), *size)
    ctx = cairo.Context(surface)
    for number, lines in enumerate(pages):
        if labels:
            surface.set_page_label(labels[number])
        ctx.set_source_rgb(1, 1, 1)
        ctx.paint()
        ctx.set_source_rgb(0, 0, 0)
        ctx.select_font_face("DejaVu Sans")
        ctx.set_font_size(16)
        y = 90
        for line in lines:
            if line:
                ctx.move_to(72, y)
                ctx.show_text(line)
            y += 26
        ctx.show_page()
    surface.finish()


cairo_pdf("text.pdf", PAGES, LABELS)


def colour_pdf(name):
    import cairo
    surface = cairo.PDFSurface(path(name), 400, 200)
    ctx = cairo.Context(surface)
    for x, rgb in ((0, (1, 0, 0)), (200, (0, 0, 1))):
        ctx.set_source_rgb(*rgb)
        ctx.rectangle(x, 0, 200, 200)
        ctx.fill()
    surface.finish()


colour_pdf("colour.pdf")  # left half red, right half blue
expect("text.pdf", ["\n".join(line for i, line in enumerate(p) if line or p[i - 1])
                    for p in PAGES])

# --- ps2pdf ---------------------------------------------------------------------------------
PS_LINES = ["PostScript made this page.", "Ghostscript turned it into a PDF."]
with open(path("ps.ps"), "w") as f:
    f.write("%!PS\n/Helvetica findfont 18 scalefont setfont\n")
    y = 700
    for line in PS_LINES:
        f.write("72 %d moveto (%s) show\n" % (y, line))
        y -= 30
    f.write("showpage\n")
subprocess.run(["ps2pdf", path("ps.ps"), path("ps.pdf")], check=True)
expect("ps.pdf", ["\n".join(PS_LINES)])

# --- scanned: the text PDF's pages as pictures only -------------------------------------------
SCAN_LINES = [
    "Scanned pages have no text layer at all.",
    "Tesseract reads the words back from the picture.",
    "The character error rate should stay small.",
]
cairo_pdf("scan-source.pdf", [SCAN_LINES])
subprocess.run(["pdftoppm", "-r", "200", "-gray", "-png", path("scan-source.pdf"),
                path("scan")], check=True)
scans = sorted(p for p in os.listdir(OUT) if p.startswith("scan-") and p.endswith(".png"))
subprocess.run(["img2pdf", "-o", path("scanned.pdf")] + [path(p) for p in scans], check=True)
expect("scanned.pdf", ["\n".join(SCAN_LINES)])

# --- encrypted (a user password) and truncated ----------------------------------------------
subprocess.run(["qpdf", "--encrypt", "secret", "owner", "256", "--", path("text.pdf"),
                path("encrypted.pdf")], check=True)
with open(path("text.pdf"), "rb") as f:
    data = f.read()
with open(path("truncated.pdf"), "wb") as f:
    f.write(data[: len(data) // 3])
with open(path("not-a.pdf"), "wb") as f:
    f.write(b"%PDF-1.4\n" + b"\x00garbage" * 100)


# --- hand-written PDFs ----------------------------------------------------------------------
def pdf(objs, root=1):
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, o in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + o + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    for o in offsets:
        out += b"%010d 00000 n \n" % o
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objs) + 1, root, xref)
    return bytes(out)


def stream(data, extra=b""):
    return (b"<< /Length %d /Filter /FlateDecode %s >>\nstream\n" % (len(data), extra) + data +
            b"\nendstream")


def zeros(mib):
    c = zlib.compressobj(9)
    chunk = b"\0" * (1 << 20)
    return b"".join(c.compress(chunk) for _ in range(mib)) + c.flush()


HELLO = stream(zlib.compress(b"BT /F1 24 Tf 72 700 Td (Hello page) Tj ET"))
FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"

# A page tree whose kid points back at its parent.
with open(path("loop.pdf"), "wb") as f:
    f.write(pdf([b"<< /Type /Catalog /Pages 2 0 R >>",
                 b"<< /Type /Pages /Kids [3 0 R 2 0 R] /Count 2 >>",
                 b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
                 b"/Resources << /Font << /F1 5 0 R >> >> >>",
                 HELLO, FONT]))

# 10,000 pages sharing one content stream.
N = 10000
kids = b" ".join(b"%d 0 R" % (5 + i) for i in range(N))
objs = [b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % N, HELLO, FONT]
for i in range(N):
    objs.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R "
                b"/Resources << /Font << /F1 4 0 R >> >> >>")
with open(path("pages-10000.pdf"), "wb") as f:
    f.write(pdf(objs))

# Decompression bomb: an embedded font that inflates to 1 GiB (Poppler reads fonts whole).
if not os.path.exists(path("font-bomb.pdf")):
    with open(path("font-bomb.pdf"), "wb") as f:
        f.write(pdf([b"<< /Type /Catalog /Pages 2 0 R >>",
                     b"<< /Type /Pages /Kids [3 0 R 8 0 R] /Count 2 >>",
                     b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
                     b"/Resources << /Font << /F1 5 0 R >> >> >>",
                     stream(zlib.compress(b"BT /F1 24 Tf 72 700 Td (Bomb) Tj ET")),
                     b"<< /Type /Font /Subtype /TrueType /BaseFont /Bomb /FirstChar 32 "
                     b"/LastChar 126 /FontDescriptor 6 0 R >>",
                     b"<< /Type /FontDescriptor /FontName /Bomb /Flags 32 /FontBBox [0 0 1000 "
                     b"1000] /ItalicAngle 0 /Ascent 800 /Descent -200 /CapHeight 700 /StemV 80 "
                     b"/FontFile2 7 0 R >>",
                     stream(zeros(1024)),
                     b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 9 0 R "
                     b"/Resources << /Font << /F1 10 0 R >> >> >>",
                     stream(zlib.compress(b"BT /F1 24 Tf 72 700 Td (After the bomb) Tj ET")),
                     FONT]))

# A 100-megapixel picture on one page (10,000 x 10,000 gray pixels, flate-compressed).
W = H = 10000
c = zlib.compressobj(9)
row_white = b"\xff" * W
row_black = b"\x00" * W
body = b"".join(c.compress(row_black if (y // 500) % 2 == 0 and y < 2000 else row_white)
                for y in range(H)) + c.flush()
with open(path("big-picture.pdf"), "wb") as f:
    f.write(pdf([b"<< /Type /Catalog /Pages 2 0 R >>",
                 b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                 b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 7200 7200] /Contents 4 0 R "
                 b"/Resources << /XObject << /Im1 5 0 R >> >> >>",
                 stream(zlib.compress(b"q 7200 0 0 7200 0 0 cm /Im1 Do Q")),
                 stream(body, b"/Type /XObject /Subtype /Image /Width %d /Height %d "
                              b"/ColorSpace /DeviceGray /BitsPerComponent 8" % (W, H))]))

# --- HTML -----------------------------------------------------------------------------------
HTML = """<!DOCTYPE html>
<html><head><title>Sample page</title><style>body { color: red }</style>
<script>var hidden = "script text";</script></head>
<body>
<nav><a href="/">Home</a> <a href="/about">About</a></nav>
<h1>Main heading</h1>
<p>First paragraph with <b>bold</b> and
   <i>italic</i> words.</p>
<ul><li>Apples</li><li>Pears<ol><li>Conference</li></ol></li></ul>
<table><tr><th>Name</th><th>Count</th></tr><tr><td>Cats</td><td>3</td></tr></table>
<div hidden>Hidden text</div>
<p>Picture: <img src="pic.png" alt="A red square"> <img src="https://example.org/x.png"></p>
<h2>Second heading</h2>
<pre>code  line 1
code  line 2</pre>
</body></html>
"""
with open(path("page.html"), "w", encoding="utf-8") as f:
    f.write(HTML)
expect("page.html", ["""# Main heading

First paragraph with bold and italic words.

- Apples
- Pears
  1. Conference

Name | Count
Cats | 3

Picture:

## Second heading

code  line 1
code  line 2
"""])


# --- zip packages ---------------------------------------------------------------------------
def package(name, members, stored_first=None):
    with zipfile.ZipFile(path(name), "w", zipfile.ZIP_DEFLATED) as z:
        if stored_first:
            z.writestr(zipfile.ZipInfo(stored_first[0]), stored_first[1],
                       compress_type=zipfile.ZIP_STORED)
        for member, content in members.items():
            z.writestr(member, content)


XHTML = """<?xml version="1.0" encoding="utf-8"?>
<html xmlns="http://www.w3.org/1999/xhtml"><head><title>{title}</title></head>
<body><h1>{title}</h1>{body}</body></html>"""
package("book.epub", {
    "META-INF/container.xml": """<?xml version="1.0"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>
</rootfiles></container>""",
    "OEBPS/content.opf": """<?xml version="1.0"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Test Book</dc:title>
<dc:identifier id="id">x</dc:identifier></metadata>
<manifest>
<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
<item id="c2" href="text/two.xhtml" media-type="application/xhtml+xml"/>
<item id="c1" href="text/one.xhtml" media-type="application/xhtml+xml"/>
</manifest>
<spine><itemref idref="c1"/><itemref idref="c2"/></spine></package>""",
    "OEBPS/nav.xhtml": """<?xml version="1.0"?>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><body>
<nav epub:type="toc"><ol><li><a href="text/one.xhtml">Chapter One: Beginnings</a></li>
<li><a href="text/two.xhtml#start">Chapter Two: 日本語の章</a></li></ol></nav></body></html>""",
    "OEBPS/text/one.xhtml": XHTML.format(title="One", body="<p>The first chapter.</p>"),
    "OEBPS/text/two.xhtml": XHTML.format(title="Two", body="<p>第二章のテキスト。</p>"),
}, stored_first=("mimetype", "application/epub+zip"))
expect("book.epub", ["# One\n\nThe first chapter.\n", "# Two\n\n第二章のテキスト。\n"])

# The same book with DRM: encryption.xml names a chapter.
with zipfile.ZipFile(path("book.epub")) as src, \
        zipfile.ZipFile(path("drm.epub"), "w", zipfile.ZIP_DEFLATED) as dst:
    for info in src.infolist():
        dst.writestr(info, src.read(info.filename))
    dst.writestr("META-INF/encryption.xml", """<?xml version="1.0"?>
<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container"
 xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>
<enc:CipherData><enc:CipherReference URI="OEBPS/text/one.xhtml"/></enc:CipherData>
</enc:EncryptedData></encryption>""")

W_NS = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
package("doc.docx", {
    "[Content_Types].xml": "<Types/>",
    "docProps/core.xml": """<?xml version="1.0"?><cp:coreProperties
 xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties"
 xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Word title</dc:title></cp:coreProperties>""",
    "word/document.xml": """<?xml version="1.0"?><w:document %s><w:body>
<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Report heading</w:t></w:r></w:p>
<w:p><w:r><w:t xml:space="preserve">Hello </w:t></w:r><w:r><w:t>world</w:t></w:r><w:del><w:r><w:delText>gone</w:delText></w:r></w:del></w:p>
<w:p><w:pPr><w:numPr><w:ilvl w:val="0"/></w:numPr></w:pPr><w:r><w:t>Item one</w:t></w:r></w:p>
<w:tbl><w:tr><w:tc><w:p><w:r><w:t>A1</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>B1</w:t></w:r></w:p></w:tc></w:tr></w:tbl>
<w:p><w:r><w:br w:type="page"/><w:t>Second page text</w:t></w:r></w:p>
</w:body></w:document>""" % W_NS,
})
expect("doc.docx", ["# Report heading\n\nHello world\n\n- Item one\n\nA1 | B1\n",
                    "Second page text\n"])

ODF_NS = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
          'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
          'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
          'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
          'xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0"')
package("doc.odt", {
    "content.xml": """<?xml version="1.0"?><office:document-content %s><office:body><office:text>
<text:h text:outline-level="2">Section title</text:h>
<text:p>Plain<text:s/>text<text:tab/>here.</text:p>
<text:list><text:list-item><text:p>First item</text:p></text:list-item></text:list>
<table:table><table:table-row><table:table-cell><text:p>x</text:p></table:table-cell>
<table:table-cell><text:p>y</text:p></table:table-cell></table:table-row></table:table>
</office:text></office:body></office:document-content>""" % ODF_NS,
}, stored_first=("mimetype", "application/vnd.oasis.opendocument.text"))
expect("doc.odt", ["## Section title\n\nPlain text here.\n\n- First item\n\nx | y\n"])

package("deck.odp", {
    "content.xml": """<?xml version="1.0"?><office:document-content %s><office:body>
<office:presentation>
<draw:page draw:name="s1"><draw:frame presentation:class="title"><draw:text-box>
<text:p>Opening slide</text:p></draw:text-box></draw:frame>
<draw:frame><draw:text-box><text:p>Welcome words</text:p></draw:text-box></draw:frame>
<presentation:notes><draw:frame><draw:text-box><text:p>Speaker notes</text:p></draw:text-box>
</draw:frame></presentation:notes></draw:page>
<draw:page draw:name="s2"><draw:frame><draw:text-box><text:p>Second slide</text:p>
</draw:text-box></draw:frame></draw:page>
</office:presentation></office:body></office:document-content>""" % ODF_NS,
}, stored_first=("mimetype", "application/vnd.oasis.opendocument.presentation"))
expect("deck.odp", ["Opening slide\n\nWelcome words\n", "Second slide\n"])

P_NS = ('xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" '
        'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
        'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"')


def slide(title, body):
    return """<?xml version="1.0"?><p:sld %s><p:cSld><p:spTree>
<p:sp><p:nvSpPr><p:cNvPr id="1" name="t"/><p:cNvSpPr/><p:nvPr><p:ph type="title"/></p:nvPr></p:nvSpPr>
<p:txBody><a:p><a:r><a:t>%s</a:t></a:r></a:p></p:txBody></p:sp>
<p:sp><p:nvSpPr><p:cNvPr id="2" name="b"/><p:cNvSpPr/><p:nvPr/></p:nvSpPr>
<p:txBody><a:p><a:r><a:t>%s</a:t></a:r></a:p></p:txBody></p:sp>
</p:spTree></p:cSld></p:sld>""" % (P_NS, title, body)


package("deck.pptx", {
    "[Content_Types].xml": "<Types/>",
    "ppt/presentation.xml": """<?xml version="1.0"?><p:presentation %s><p:sldIdLst>
<p:sldId id="257" r:id="rId3"/><p:sldId id="256" r:id="rId2"/></p:sldIdLst></p:presentation>""" % P_NS,
    "ppt/_rels/presentation.xml.rels": """<?xml version="1.0"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
<Relationship Id="rId2" Type="slide" Target="slides/slide1.xml"/>
<Relationship Id="rId3" Type="slide" Target="slides/slide2.xml"/></Relationships>""",
    "ppt/slides/slide1.xml": slide("Later title", "Shown second"),
    "ppt/slides/slide2.xml": slide("First title", "Shown first"),
})
expect("deck.pptx", ["First title\n\nShown first\n", "Later title\n\nShown second\n"])

# A zip bomb: a DOCX whose document.xml inflates to 200 MiB of spaces.
if not os.path.exists(path("bomb.docx")):
    with zipfile.ZipFile(path("bomb.docx"), "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        with z.open("word/document.xml", "w") as f:
            f.write(b"<?xml version='1.0'?><w:document>")
            chunk = b" " * (1 << 20)
            for _ in range(200):
                f.write(chunk)
            f.write(b"</w:document>")

# An XML entity bomb ("billion laughs") in an ODT.
LAUGHS = '<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "ha">' + "".join(
    '<!ENTITY %s "&%s;&%s;&%s;&%s;&%s;&%s;&%s;&%s;&%s;&%s;">' % ((chr(98 + i),) + (chr(97 + i),) * 10)
    for i in range(9)) + ']>'
package("laughs.odt", {
    "content.xml": LAUGHS + """<office:document-content %s><office:body><office:text>
<text:p>Before &j; after</text:p></office:text></office:body></office:document-content>""" % ODF_NS,
}, stored_first=("mimetype", "application/vnd.oasis.opendocument.text"))
# Office packages without their main part (a zip renamed, a package cut short): refused, naming
# what is missing.
package("partless.docx", {"docProps/core.xml": "<x/>"})
package("partless.pptx", {"ppt/slides/slide1.xml": "<x/>"})
package("partless.odt", {"meta.xml": "<x/>"},
        stored_first=("mimetype", "application/vnd.oasis.opendocument.text"))
print("made documents in", OUT)
