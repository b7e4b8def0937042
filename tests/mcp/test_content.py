"""Small pure pieces: content conversion, progress numbering, hints, approval questions."""

from __future__ import annotations

import base64
from typing import Any

import mcp.types as mt

from deftly import ImagePart, TextPart, ToolResult, ToolTraits, ToolUpdate
from deftly.contract.display import CommandDisplay, FileIODisplay, GenericDisplay
from deftly.features.mcp.content import MAX_BINARY_BYTES, from_mcp_result, to_mcp_content
from deftly.features.mcp.tool import traits_from
from deftly.policy.approval import ApprovalRequest
from deftly.serve.approval import APPROVAL_SCHEMA, display_text, question
from deftly.serve.server import CallChannel, annotations_for
from tests.helpers import PNG_1PX, EchoTool


def convert(*blocks: Any, structured: Any = None, error: bool = False) -> ToolResult:
    result = mt.CallToolResult(content=list(blocks), structured_content=structured, is_error=error)
    return from_mcp_result(result, where="MCP server x", max_text=20)


def test_text_only_results_become_one_string() -> None:
    out = convert(mt.TextContent(type="text", text="a"), mt.TextContent(type="text", text="b"))
    assert out.output == "a\nb" and not out.is_error  # separate blocks stay apart
    assert convert(mt.TextContent(type="text", text="no"), error=True).is_error


def test_a_resource_link_reads_as_its_mounted_uri_with_how_to_open_it() -> None:
    link = mt.ResourceLink(type="resource_link", uri="note://x", name="x")
    result = mt.CallToolResult(
        content=[mt.TextContent(type="text", text="see:"), link], structured_content={"n": 1}
    )
    out = from_mcp_result(result, where="w", max_text=99, link=lambda u: f"mcp://s/{u}")
    assert (
        out.output
        == 'see:\n[resource: mcp://s/note://x (x); open it with ReadMcpResource(uri="mcp://s/note://x")]'
    )
    assert out.structured == {"n": 1}


def test_resources_links_and_structured_content() -> None:
    text_resource = mt.EmbeddedResource(
        type="resource", resource=mt.TextResourceContents(uri="file:///a", text="inside")
    )
    blob = mt.EmbeddedResource(
        type="resource",
        resource=mt.BlobResourceContents(
            uri="file:///b.bin", blob=base64.b64encode(b"xyz").decode(), mime_type="x/y"
        ),
    )
    link = mt.ResourceLink(type="resource_link", uri="file:///c", name="c")
    out = convert(text_resource, blob, link)
    assert isinstance(out.output, str)
    assert "inside" in out.output and "file:///b.bin" in out.output
    assert "[resource: file:///c (c)]" in out.output
    assert '"sum": 3' in str(convert(structured={"sum": 3}).output)
    # Structured content is not repeated when the server already sent text.
    assert convert(mt.TextContent(type="text", text="3"), structured={"sum": 3}).output == "3"


def test_media_is_kept_and_text_beside_it_is_capped() -> None:
    image = mt.ImageContent(type="image", data=PNG_1PX, mime_type="image/png")
    out = convert(mt.TextContent(type="text", text="y" * 50), image)
    assert isinstance(out.output, list) and out.truncated
    assert isinstance(out.output[0], TextPart) and out.output[0].text == "y" * 20
    assert isinstance(out.output[1], ImagePart)
    huge = mt.ImageContent(type="image", data="A" * (MAX_BINARY_BYTES * 2), mime_type="image/png")
    dropped = convert(huge)
    assert isinstance(dropped.output, str) and "left out" in dropped.output
    bad = convert(mt.ImageContent(type="image", data="not base64!", mime_type="image/png"))
    assert "not valid base64" in str(bad.output)


def test_deftly_results_as_mcp_content() -> None:
    blocks = to_mcp_content(
        ToolResult([TextPart("look"), ImagePart(PNG_1PX, "image/png")], note="for the model")
    )
    assert [b.type for b in blocks] == ["text", "image", "text"]
    assert isinstance(blocks[-1], mt.TextContent) and blocks[-1].text == "for the model"


def test_progress_always_grows() -> None:
    channel = CallChannel("c1", "Tick", ctx=None)  # type: ignore[arg-type]
    updates = [
        ToolUpdate("progress", progress=10, total=100),
        ToolUpdate("stdout", text="line"),
        ToolUpdate("progress", progress=5, total=100),  # went backwards: counted, not used
        ToolUpdate("progress", progress=50, total=100, text="half"),
        ToolUpdate("stdout", text="x" * 5000),
    ]
    values = [channel.next_progress(u) for u in updates]
    assert [v for v, _, _ in values] == [10, 11, 12, 50, 51]
    assert values[3] == (50, 100, "half")
    assert len(values[4][2] or "") <= 1001


def test_annotations_follow_traits_and_hints_are_trusted_only_on_request() -> None:
    hints = annotations_for(EchoTool())
    assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint) == (
        True,
        False,
        True,
    )
    claimed = mt.ToolAnnotations(read_only_hint=True)
    assert traits_from(claimed, trust=False) == ToolTraits()
    assert traits_from(claimed, trust=True).read_only
    writer = traits_from(mt.ToolAnnotations(read_only_hint=False), trust=True)
    assert writer.destructive and writer.open_world  # the MCP defaults when unsaid


def request(display: Any) -> ApprovalRequest:
    return ApprovalRequest(
        call_id="c1",
        tool="Edit",
        action="Editing a.py",
        args={},
        display=display,
        approval_rule="Edit(/w/a.py)",
        reason="edits ask in manual mode",
    )


def test_approval_questions_show_what_will_happen() -> None:
    diff = question(
        request(FileIODisplay(operation="edit", path="/w/a.py", before="x = 1\n", after="x = 2\n"))
    )
    assert "deftly: allow Edit?" in diff and "-x = 1" in diff and "+x = 2" in diff
    assert "edits ask in manual mode" in diff and "Edit(/w/a.py)" in diff
    assert display_text(CommandDisplay(command="make test", cwd="/w")) == "$ make test\n(in /w)"
    assert "detail" in display_text(GenericDisplay(summary="s", detail={"detail": 1}))
    decisions = [o["const"] for o in APPROVAL_SCHEMA["properties"]["decision"]["oneOf"]]
    assert decisions == ["approve", "approve_session", "reject"]
