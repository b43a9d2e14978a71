"""What every game's custom properties share: Blender's integer properties are signed
32-bit, so a stored u32 is kept as the int32 of the same bits."""


def signed32(value: int) -> int:
    """A u32 (flags, ids) -> the signed 32-bit int an IDProperty can hold, same bits."""
    value = int(value)
    return value - (1 << 32) if value >= 1 << 31 else value


def unsigned32(value: int) -> int:
    """The inverse of signed32."""
    return int(value) & 0xFFFFFFFF
