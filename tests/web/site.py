"""The test site: article pages, text, JSON, a PDF, images, redirects, a slow page, a
50 MB body and a wrong content type, as routes of the loopback `WebServer`."""

from __future__ import annotations

import io
import json
import threading
import zlib

from PIL import Image

from tests.web.server import Handler, Route

FOX = "The quick brown fox jumps over the lazy dog near the riverbank."
ARTICLE = f"""<!doctype html>
<html><head><title>Fox Facts</title></head>
<body>
<nav><a href="/">Home</a> | <a href="/about">About us</a> | <a href="/shop">Shop</a></nav>
<article>
<h1>Fox Facts</h1>
<p>{FOX} {"Foxes are small omnivores with bushy tails and keen ears. " * 8}</p>
<p>Read <a href="/guide/dens">the guide to dens</a> or
<a href="https://example.org/foxes">the encyclopedia entry</a> for more.</p>
<h2>Diet</h2>
<ul><li>berries and fruit</li><li>small mammals</li></ul>
<p>{"They hunt mostly at dusk and dawn, listening for prey under snow. " * 6}</p>
</article>
<footer>Copyright 2026 Fox Facts Ltd. Cookie settings. Terms of use.</footer>
</body></html>
"""
SCRIPT_ONLY = "<html><head><title>App</title></head><body><script>render()</script></body></html>"
PLAIN = "plain body\nsecond line\n"
MARKDOWN = "# Notes\n\n- *one*\n- [two](https://example.org/two)\n"
DATA = {"name": "deftly", "tools": ["FetchURL", "WebSearch"], "nested": {"n": 1}}
LONG_LINE = "line {:05d} of the long document, with some words to fill it out nicely.\n"
LONG = "".join(LONG_LINE.format(n) for n in range(2_000))
HUGE = 50 * 1024 * 1024
CHUNK = 64 * 1024


def pdf_bytes(text: str) -> bytes:
    """A one-page PDF whose text layer says `text` (written by hand, offsets computed)."""
    stream = f"BT /F1 18 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Title (A Test Document) >>",
    ]
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(out.tell())
        out.write(f"{number} 0 obj\n".encode() + body + b"\nendobj\n")
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for offset in offsets:
        out.write(f"{offset:010d} 00000 n \n".encode())
    out.write(
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R /Info 6 0 R >>\n"
        f"startxref\n{xref}\n%%EOF\n".encode()
    )
    return out.getvalue()


def png_bytes(width: int, height: int, color: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    """A PNG of one colour."""
    out = io.BytesIO()
    Image.new("RGB", (width, height), color).save(out, format="PNG")
    return out.getvalue()


PDF = pdf_bytes("Hello from the PDF world")
PNG = png_bytes(64, 48)


def _fixed(status: int, body: bytes, content_type: str | None, **headers: str) -> Route:
    def route(h: Handler) -> None:
        h.reply(status, body, content_type, headers)

    return route


def _redirect(location: str, status: int = 302) -> Route:
    return _fixed(status, b"", None, Location=location)


def _slow(h: Handler) -> None:
    """Headers at once, then nothing until the server closes."""
    h.server.finished.setdefault("/slow started", threading.Event()).set()
    h.send_response(200)
    h.send_header("Content-Type", "text/plain")
    h.send_header("Content-Length", "100")
    h.end_headers()
    h.wfile.write(b"a little")
    h.wfile.flush()
    h.server.released.wait(60)


def _huge(declare: bool) -> Route:
    def route(h: Handler) -> None:
        """50 MB, streamed in chunks; counts what it managed to send."""
        name = h.seen.path
        done = h.server.finished.setdefault(name, threading.Event())
        h.server.counters[name] = 0
        h.send_response(200)
        h.send_header("Content-Type", "text/plain")
        if declare:
            h.send_header("Content-Length", str(HUGE))
        else:
            h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        chunk = b"x" * CHUNK
        try:
            for _ in range(HUGE // CHUNK):
                if declare:
                    h.wfile.write(chunk)
                else:
                    h.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                h.server.counters[name] += len(chunk)
            if not declare:
                h.wfile.write(b"0\r\n\r\n")
        except OSError:
            pass  # the client went away: that is the point
        finally:
            h.close_connection = True
            done.set()

    return route


def _gzip_article(h: Handler) -> None:
    packer = zlib.compressobj(wbits=31)
    body = packer.compress(ARTICLE.encode()) + packer.flush()
    h.reply(200, body, "text/html; charset=utf-8", {"Content-Encoding": "gzip"})


def site_routes(other_host_url: str) -> dict[str, Route]:
    """Every route of the test site (`other_host_url`: a URL on another host name)."""
    return {
        "/article": _fixed(200, ARTICLE.encode(), "text/html; charset=utf-8"),
        "/article.gz": _gzip_article,
        "/script-only": _fixed(200, SCRIPT_ONLY.encode(), "text/html"),
        "/plain": _fixed(200, PLAIN.encode(), "text/plain; charset=utf-8"),
        "/latin1": _fixed(200, "café".encode("latin-1"), "text/plain; charset=iso-8859-1"),
        "/notes.md": _fixed(200, MARKDOWN.encode(), "text/markdown"),
        "/data.json": _fixed(200, json.dumps(DATA).encode(), "application/json"),
        "/long.txt": _fixed(200, LONG.encode(), "text/plain"),
        "/doc.pdf": _fixed(200, PDF, "application/pdf"),
        "/untyped.pdf": _fixed(200, PDF, None),
        "/image.png": _fixed(200, PNG, "image/png"),
        "/wide.png": _fixed(200, png_bytes(4_000, 1_000), "image/png"),
        "/archive.zip": _fixed(200, b"PK\x03\x04" + b"\x00" * 200, "application/zip"),
        "/broken.pdf": _fixed(200, b"%PDF-1.4 not really", "application/pdf"),
        "/empty": _fixed(200, b"", "text/plain"),
        "/missing": _fixed(404, b"no such page", "text/plain"),
        "/error": _fixed(500, b"boom", "text/plain"),
        "/hop1": _redirect("/hop2"),
        "/hop2": _redirect("/hop3", 301),
        "/hop3": _redirect("/plain", 307),
        "/loop": _redirect("/loop"),
        "/no-location": _fixed(302, b"odd", "text/plain"),
        "/to-metadata": _redirect("http://169.254.169.254/latest/meta-data/"),
        "/to-private": _redirect("http://10.0.0.7/admin"),
        "/to-other-host": _redirect(other_host_url),
        "/slow": _slow,
        "/huge": _huge(declare=False),
        "/huge-declared": _huge(declare=True),
    }
