"""Check a .gguf file before llama.cpp sees it, and read its metadata.

llama.cpp answers a wrong or truncated file with a bare "failed to load model";
reading the header ourselves (a few MB, even for a 4 GB model) lets us say what is
wrong with which file and what to do. The tensor table tells where the data must
end, which catches interrupted downloads.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

MAGIC = b"GGUF"

# value type id -> struct format for scalars
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
            10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
# Arrays longer than this (token lists, merges) are skipped, not kept in memory.
_KEEP_ARRAY_MAX = 64


class GGUFError(Exception):
    """The file is not a usable GGUF model; the message says why and what to do."""


class NotAnAdapter(GGUFError):
    """A readable GGUF file that is not a LoRA adapter for the model at hand."""


@dataclass(frozen=True)
class GGUFInfo:
    path: Path
    version: int
    size: int
    metadata: dict[str, Any] = field(repr=False)
    tensor_count: int = 0

    @property
    def architecture(self) -> str:
        return str(self.metadata.get("general.architecture", "unknown"))

    @property
    def name(self) -> str:
        return str(self.metadata.get("general.name") or self.path.stem)

    @property
    def file_type(self) -> str:
        return str(self.metadata.get("general.type", "model"))

    @property
    def chat_template(self) -> str | None:
        return self.metadata.get("tokenizer.chat_template")

    @property
    def context_length(self) -> int | None:
        value = self.metadata.get(f"{self.architecture}.context_length")
        return int(value) if value is not None else None


def check_adapter(path: Path, base_architecture: str = "") -> GGUFInfo:
    """``path``'s header, once it says the file is a LoRA adapter for models of
    ``base_architecture`` (any, when empty): an adapter only applies to the model family
    it was trained on. Reads the header only, so it is quick for a large file."""
    info = inspect_gguf(path)
    if info.file_type != "adapter":
        raise NotAnAdapter(f"{path} is a {info.file_type}, not a LoRA adapter (its "
                           f"general.type is {info.file_type!r}): load it as the model, "
                           "and give the adapter made for it as the adapter")
    if base_architecture and info.architecture != base_architecture:
        raise NotAnAdapter(f"LoRA adapter {path} was made for {info.architecture!r} "
                           f"models, but the model is {base_architecture!r}: load the "
                           "adapter's own base model first")
    return info


def inspect_gguf(path: str | Path, *, check_data: bool = True) -> GGUFInfo:
    """Read the header of ``path``; raise GGUFError naming the file when it is unusable."""
    path = Path(path).expanduser()
    if not path.exists():
        raise GGUFError(f"model file not found: {path}")
    if path.is_dir():
        raise GGUFError(f"{path} is a folder; give the path of a .gguf file inside it")
    size = path.stat().st_size
    try:
        with path.open("rb") as f:
            head = f.read(4)
            if head != MAGIC:
                raise GGUFError(
                    f"{path} is not a GGUF model file (it starts with {head!r}, not b'GGUF'); "
                    "deskmate runs llama.cpp models in GGUF format — pick a .gguf file"
                )
            version = _read(f, "<I")
            if version not in (2, 3):
                raise GGUFError(f"{path} uses GGUF version {version}, which llama.cpp "
                                "no longer reads; download a current .gguf of this model")
            tensor_count, kv_count = _read(f, "<Q"), _read(f, "<Q")
            metadata = {}
            for _ in range(kv_count):
                key = _read_string(f)
                metadata[key] = _read_value(f, _read(f, "<I"))
            data_end = _data_end(f, tensor_count, metadata) if check_data else 0
    except (struct.error, EOFError, UnicodeDecodeError, ValueError, MemoryError) as exc:
        raise GGUFError(
            f"{path} is damaged or truncated ({size:,} bytes; its header cannot be read: "
            f"{exc}); download it again"
        ) from exc
    if data_end > size:
        raise GGUFError(
            f"{path} is truncated: {size / 1e6:,.1f} MB of the {data_end / 1e6:,.1f} MB its "
            "header describes — the download was probably interrupted; download it again"
        )
    return GGUFInfo(path=path, version=version, size=size, metadata=metadata,
                    tensor_count=tensor_count)


def _data_end(f: BinaryIO, tensor_count: int, metadata: dict[str, Any]) -> int:
    """Byte offset where the last tensor's data ends, from the tensor table."""
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

    end = 0
    for _ in range(tensor_count):
        _read_string(f)
        n_dims = _read(f, "<I")
        dims = [_read(f, "<Q") for _ in range(n_dims)]
        ggml_type, offset = _read(f, "<I"), _read(f, "<Q")
        try:
            block, type_size = GGML_QUANT_SIZES[GGMLQuantizationType(ggml_type)]
        except (ValueError, KeyError):
            continue  # a type newer than our gguf package: cannot size it, skip
        count = 1
        for d in dims:
            count *= d
        end = max(end, offset + count // block * type_size)
    alignment = int(metadata.get("general.alignment", 32))
    data_start = -(-f.tell() // alignment) * alignment
    return data_start + end


def _read(f: BinaryIO, fmt: str) -> Any:
    size = struct.calcsize(fmt)
    raw = f.read(size)
    if len(raw) != size:
        raise EOFError("unexpected end of file")
    return struct.unpack(fmt, raw)[0]


def _read_string(f: BinaryIO) -> str:
    length = _read(f, "<Q")
    if length > 1 << 28:
        raise ValueError(f"implausible string length {length}")
    raw = f.read(length)
    if len(raw) != length:
        raise EOFError("unexpected end of file")
    return raw.decode("utf-8")


def _read_value(f: BinaryIO, kind: int) -> Any:
    if kind in _SCALARS:
        return _read(f, _SCALARS[kind])
    if kind == _STRING:
        return _read_string(f)
    if kind == _ARRAY:
        item_kind, count = _read(f, "<I"), _read(f, "<Q")
        if count <= _KEEP_ARRAY_MAX:
            return [_read_value(f, item_kind) for _ in range(count)]
        if item_kind in _SCALARS:
            f.seek(count * struct.calcsize(_SCALARS[item_kind]), 1)
        else:
            for _ in range(count):
                _read_value(f, item_kind)
        return f"<array of {count}>"
    raise ValueError(f"unknown metadata value type {kind}")
