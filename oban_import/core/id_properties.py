"""What every game's custom properties share: Blender's integer properties are signed
32-bit, so a stored u32 is kept as the int32 of the same bits; and reading a property the
user may have typed anything into, checked, an ObanError naming the owner and the property
where it is not what it should be (no traceback from a property a user can type)."""

import math
import zlib

import numpy as np

from .errors import ObanError


def signed32(value: int) -> int:
    """A u32 (flags, ids) -> the signed 32-bit int an IDProperty can hold, same bits."""
    value = int(value)
    return value - (1 << 32) if value >= 1 << 31 else value


def unsigned32(value: int) -> int:
    """The inverse of signed32."""
    return int(value) & 0xFFFFFFFF


def signed_crc32(*arrays) -> int:
    """A CRC-32 of the arrays' bytes, one after the other, as the signed 32-bit int an
    IDProperty holds: the fingerprint an import keeps to tell, at an export, what changed."""
    crc = 0
    for values in arrays:
        crc = zlib.crc32(np.ascontiguousarray(values).tobytes(), crc)
    return signed32(crc)


def plain(value):
    """An ID property's value as plain Python (an array or group as a list or dict)."""
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if hasattr(value, "to_list"):
        return value.to_list()
    return value


def number(owner, key, label, default=None) -> float:
    """A finite number property (`default` where it is absent)."""
    value = plain(owner.get(key, default))
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ObanError(label, f"property '{key}' is {value!r}, not a finite number")
    return float(value)


def whole(owner, key, label, limits, default=None) -> int:
    """A whole number property within `limits` (low, high), `default` where it is absent."""
    value = plain(owner.get(key, default))
    if isinstance(value, bool) or not isinstance(value, int):
        raise ObanError(label, f"property '{key}' is {value!r}, not a whole number")
    if not limits[0] <= value <= limits[1]:
        raise ObanError(label, f"property '{key}' is {value}, not {limits[0]} to {limits[1]}")
    return value


def boolean(owner, key, label, default=False) -> bool:
    """A yes-or-no property: a boolean, or the whole number 0 or 1 (Blender 3's booleans)."""
    value = plain(owner.get(key, default))
    if value not in (0, 1) or not isinstance(value, int):
        raise ObanError(label, f"property '{key}' is {value!r}, not on or off")
    return bool(value)


def numbers(owner, key, label, count, default=None, per="") -> np.ndarray:
    """(count,) float64 of a property of `count` finite numbers (`default` where it is absent;
    `per`: the property that says how many, named in the message where it is there)."""
    value = plain(owner.get(key, default))
    try:
        values = np.array(value, np.float64)
    except (TypeError, ValueError):
        values = None
    if values is None or values.ndim != 1 or not np.isfinite(values).all():
        raise ObanError(label, f"property '{key}' is not a list of finite numbers")
    if len(values) != count:
        raise ObanError(label, f"property '{key}' holds {len(values)} numbers, not {count}"
                        + (f" (for the {len(owner[per])} parts of '{per}')" if per and per in owner else ""))
    return values


def text(owner, key, label, default="", limit=None) -> str:
    """A text property (`default` where it is absent), at most `limit` bytes of UTF-8."""
    value = plain(owner.get(key, default))
    if not isinstance(value, str):
        raise ObanError(label, f"property '{key}' is {value!r}, not text")
    if limit is not None and len(value.encode("utf-8", "surrogatepass")) > limit:
        raise ObanError(label, f"property '{key}' is {value!r}: longer than the {limit} bytes the game stores")
    return value


def texts(owner, key, label, default=()) -> list:
    """A property of texts (`default` where it is absent)."""
    value = plain(owner.get(key, default))
    if not isinstance(value, list | tuple) or not all(isinstance(item, str) for item in value):
        raise ObanError(label, f"property '{key}' is not a list of texts")
    return list(value)


def renamed(owner, keys: dict) -> bool:
    """Each of `keys` ({today's key: an earlier one}) an owner holds under its earlier name moved
    to today's (where today's is not there already); whether any was."""
    found = [(new, old) for new, old in keys.items() if old in owner and new not in owner]
    for new, old in found:
        owner[new] = owner[old]
        del owner[old]
    return bool(found)
