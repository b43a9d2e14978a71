"""op2_art.bmp: every bitmap's pixels, read by seeking, as RGBA (docs/outpost2.md 2)."""

import os

import numpy as np

from ...core.errors import ObanError
from ...core.files import Closes, open_regular
from .prt import Bitmap, PrtFile

SHADOW_ALPHA = 128      # docs/outpost2.md 2: a shadow pixel is black at 50 % alpha


def find_bmp(prt_path: str) -> str:
    """op2_art.bmp beside `prt_path`, its name's case ignored; ObanError if there is none."""
    directory = os.path.dirname(os.path.abspath(prt_path))
    try:
        names = os.listdir(directory)
    except OSError:
        names = []
    for wanted in ("op2_art.bmp", os.path.splitext(os.path.basename(prt_path))[0].lower() + ".bmp"):
        for name in sorted(names):
            if name.lower() == wanted:
                return os.path.join(directory, name)
    raise ObanError(prt_path, f"no op2_art.bmp beside it (looked in {directory})")


def prt_of_bitmaps(path: str) -> str | None:
    """The .prt beside a .bmp whose bitmaps it holds (find_bmp's rule: op2_art.bmp, or the
    .prt's own name, any case), else None."""
    folder, name = os.path.split(os.path.abspath(path))
    if not name.lower().endswith(".bmp"):
        return None
    try:
        prts = sorted(other for other in os.listdir(folder) if other.lower().endswith(".prt"))
    except OSError:
        return None
    owners = [prt for prt in prts if name.lower() in ("op2_art.bmp", prt.lower()[:-4] + ".bmp")]
    return os.path.join(os.path.dirname(path), owners[0]) if owners else None


class ArtBitmaps(Closes):
    """The open op2_art.bmp of a PrtFile; `rgba(i)` reads bitmap i only. Use as a context
    manager, or call close()."""

    def __init__(self, path, prt: PrtFile):
        self.path, self.prt = str(path), prt
        self.file, self.size = open_regular(self.path)
        try:
            head = self.file.read(14)
            if len(head) < 14 or head[:2] != b"BM":
                raise ObanError(path, "byte 0: not a BMP file (needs a 14-byte header starting 'BM')")
            self.data_start = int.from_bytes(head[10:14], "little")   # the u32 at 0x0A
            if self.data_start > self.size:
                raise ObanError(path, f"byte 10: pixel data start {self.data_start} lies past the end "
                                      f"of the file ({self.size} bytes)")
            self._palettes = {}
        except BaseException:
            self.file.close()
            raise

    def close(self):
        self.file.close()

    def stored(self, index: int) -> np.ndarray:
        """Bitmap `index`'s stored rows, (height, stride) uint8, top row first."""
        bitmap = self._bitmap(index)
        start = self.data_start + bitmap.offset
        length = bitmap.stride * bitmap.height
        if bitmap.stride < bitmap.row_bytes:
            raise ObanError(self.path, f"bitmap {index}: row stride {bitmap.stride} is less than its "
                                       f"{bitmap.width} pixels need ({bitmap.row_bytes} bytes)")
        if start + length > self.size:
            raise ObanError(self.path, f"bitmap {index}: its pixels (bytes {start} to {start + length}) "
                                       f"reach past the end of the file ({self.size} bytes)")
        self.file.seek(start)
        raw = np.frombuffer(self.file.read(length), np.uint8)
        return raw.reshape(bitmap.height, bitmap.stride)

    def indices(self, index: int) -> np.ndarray:
        """(height, width) uint8: palette indices, or 0/1 for a shadow (most significant bit first)."""
        bitmap = self.prt.bitmaps[index] if 0 <= index < len(self.prt.bitmaps) else self._bitmap(index)
        rows = self.stored(index)
        if bitmap.shadow:
            return np.unpackbits(rows, axis=1)[:, :bitmap.width]
        return rows[:, :bitmap.width]

    def rgba(self, index: int) -> np.ndarray:
        """(height, width, 4) uint8, top row first. 8-bit: through the bitmap's palette, index 0
        transparent (0, 0, 0, 0); shadow: 1 is (0, 0, 0, SHADOW_ALPHA), 0 transparent."""
        bitmap = self._bitmap(index)
        pixels = self.indices(index)
        if bitmap.shadow:
            out = np.zeros(pixels.shape + (4,), np.uint8)
            out[..., 3] = pixels * SHADOW_ALPHA
            return out
        return self._palette(bitmap.palette)[pixels]

    def _bitmap(self, index) -> Bitmap:
        if not 0 <= index < len(self.prt.bitmaps):
            raise ObanError(self.path, f"bitmap index {index} is out of range ({len(self.prt.bitmaps)} bitmaps)")
        return self.prt.bitmaps[index]

    def _palette(self, index):
        if index not in self._palettes:
            if not 0 <= index < len(self.prt.palettes):
                raise ObanError(self.path, f"palette index {index} is out of range "
                                           f"({len(self.prt.palettes)} palettes)")
            table = np.empty((256, 4), np.uint8)
            table[:, :3] = self.prt.palettes[index].colors[:, :3]   # the fourth byte is ignored
            table[:, 3] = 255
            table[0] = 0                                            # index 0 is transparent
            self._palettes[index] = table
        return self._palettes[index]

