"""Transport icons painted with QPainter (crisp at any DPI, no font glyph or image file needed)."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap, QPolygonF

SIZE = 40  # drawn at 2x, shown at 20 px


def _triangle(p: QPainter, x: float, w: float, right: bool) -> None:
    top, bottom, mid = 9.0, 31.0, 20.0
    if right:
        poly = QPolygonF([QPointF(x, top), QPointF(x + w, mid), QPointF(x, bottom)])
    else:
        poly = QPolygonF([QPointF(x + w, top), QPointF(x, mid), QPointF(x + w, bottom)])
    p.drawPolygon(poly)


def _bar(p: QPainter, x: float, w: float = 4.0) -> None:
    p.drawRoundedRect(QRectF(x, 9, w, 22), 1, 1)


def transport_icon(kind: str, color: str | None = None) -> QIcon:
    """``home``, ``prev_delta``, ``prev_token``, ``play``, ``pause``, ``next_token``, ``next_delta``, ``end``.

    ``color``: the theme's icon colour by default.
    """
    if color is None:
        from callscope.ui import theme

        color = theme.ICON
    pix = QPixmap(SIZE, SIZE)
    pix.fill(Qt.GlobalColor.transparent)
    p = QPainter(pix)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(QColor(color))
    if kind == "play":
        _triangle(p, 12, 19, True)
    elif kind == "pause":
        _bar(p, 12, 6)
        _bar(p, 22, 6)
    elif kind == "prev_token":
        _bar(p, 10)
        _triangle(p, 15, 15, False)
    elif kind == "next_token":
        _triangle(p, 10, 15, True)
        _bar(p, 26)
    elif kind == "prev_delta":
        _triangle(p, 6, 14, False)
        _triangle(p, 19, 14, False)
    elif kind == "next_delta":
        _triangle(p, 7, 14, True)
        _triangle(p, 20, 14, True)
    elif kind == "home":
        _bar(p, 4)
        _triangle(p, 9, 13, False)
        _triangle(p, 21, 13, False)
    elif kind == "end":
        _triangle(p, 6, 13, True)
        _triangle(p, 18, 13, True)
        _bar(p, 32)
    p.end()
    return QIcon(pix)
