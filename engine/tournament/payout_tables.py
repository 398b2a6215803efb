"""The published payout tables: for each number of entrants, the share of the prize pool each
place is paid, in hundredths of a percent (each row sums to exactly 100.00%).

A row covers a range of entrants and lists its places in bands, as tables are printed:
``((1, 2522), (2, 1493), ..., (12, 408))`` reads "1st 25.22%, 2nd 14.93%, ..., 10th to 12th
4.08% each". Entrants are entries: a re-entry counts as one more.

``sit_and_go`` pays one place heads-up, two up to 6 entrants (65/35), three up to 10
(50/30/20), and on for sit-and-gos of several tables up to 45. ``scheduled`` pays about 15%
of the field up to 5,000 entries. Its shares follow one smooth curve, worked out once and
written here as the data it is: each paid place gets a floor of about 1.5 buy-ins, the rest
of the pool is shared by place in proportion to ``(place + 0.6) ** -a``, ``a`` chosen so
first place gets its share (26% of a final table's field down to 18% of thousands), a band's
places each get the band's mean, and first place takes the rounding.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from engine.tournament.fields import FieldError

WHOLE = 10_000  # 100.00%, in hundredths of a percent


class PayoutError(FieldError):
    """A payout table, or a request of one, refused with the field at fault."""


@dataclass(frozen=True, slots=True)
class PayoutRow:
    """The shares paid when ``low`` to ``high`` entrants play: bands of (last place, share
    of each place in the band)."""

    low: int
    high: int
    bands: tuple[tuple[int, int], ...]

    def __post_init__(self) -> None:
        at = f"rows[{self.low}-{self.high}]"
        if not 2 <= self.low <= self.high:
            raise PayoutError(at, "entrants from 2, low to high")
        first = 1
        previous = WHOLE
        for last, share in self.bands:
            if last < first or not 0 < share <= previous:
                raise PayoutError(at, "bands go down the places, shares never increasing")
            first, previous = last + 1, share
        if self.places > self.low:
            raise PayoutError(at, "pays more places than it has entrants")
        if sum(share for share in self.shares()) != WHOLE:
            raise PayoutError(at, "shares must sum to exactly 100.00%")

    @property
    def places(self) -> int:
        return self.bands[-1][0]

    def shares(self) -> tuple[int, ...]:
        """Each paid place's share, first place first."""
        out: list[int] = []
        for last, share in self.bands:
            out.extend([share] * (last - len(out)))
        return tuple(out)


@dataclass(frozen=True, slots=True)
class PayoutTable:
    """Rows one after another, from 2 entrants up to the table's largest field."""

    name: str
    rows: tuple[PayoutRow, ...]

    def __post_init__(self) -> None:
        expected = 2
        for row in self.rows:
            if row.low != expected:
                raise PayoutError(self.name, f"no row for {expected} entrants")
            expected = row.high + 1
        if not self.rows:
            raise PayoutError(self.name, "has no row")

    @property
    def max_entrants(self) -> int:
        return self.rows[-1].high

    def row_for(self, entrants: int) -> PayoutRow:
        if not isinstance(entrants, int) or isinstance(entrants, bool) or entrants < 2:
            raise PayoutError("entrants", "a tournament has at least 2 entrants")
        for row in self.rows:
            if row.low <= entrants <= row.high:
                return row
        raise PayoutError("entrants", f"{self.name} pays fields of at most {self.max_entrants}")

    def places_paid(self, entrants: int) -> int:
        return self.row_for(entrants).places

    def shares(self, entrants: int) -> tuple[int, ...]:
        return self.row_for(entrants).shares()

    def to_dict(self) -> dict[str, object]:
        """The table as published: each range of entrants and its bands."""
        return {
            "name": self.name,
            "rows": [
                {"entrants": [row.low, row.high], "bands": [list(band) for band in row.bands]}
                for row in self.rows
            ],
        }


SIT_AND_GO = PayoutTable(
    "sit_and_go",
    (
        PayoutRow(2, 2, ((1, 10000),)),
        PayoutRow(3, 6, ((1, 6500), (2, 3500))),
        PayoutRow(7, 10, ((1, 5000), (2, 3000), (3, 2000))),
        PayoutRow(11, 18, ((1, 4000), (2, 3000), (3, 2000), (4, 1000))),
        PayoutRow(19, 27, ((1, 3500), (2, 2500), (3, 1800), (4, 1300), (5, 900))),
        PayoutRow(
            28, 45, ((1, 3000), (2, 2000), (3, 1400), (4, 1100), (5, 900), (6, 850), (7, 750))
        ),
    ),
)

# The curve's rows, as printed: one row a range of entrants.
# fmt: off
_SCHEDULED_ROWS = (
    PayoutRow(2, 5, ((1, 10000),)),
    PayoutRow(6, 10, ((1, 6500), (2, 3500))),
    PayoutRow(11, 26, ((1, 5000), (2, 3000), (3, 2000))),
    PayoutRow(27, 33, ((1, 4002), (2, 2521), (3, 1905), (4, 1572))),
    PayoutRow(34, 39, ((1, 3501), (2, 2225), (3, 1684), (4, 1388), (5, 1202))),
    PayoutRow(40, 46, ((1, 3102), (2, 2008), (3, 1533), (4, 1269), (5, 1102), (6, 986))),
    PayoutRow(47, 53, ((1, 2903), (2, 1854), (3, 1403), (4, 1153), (5, 995), (6, 886), (7, 806))),
    PayoutRow(54, 59, (
        (1, 2754), (2, 1739), (3, 1305), (4, 1065), (5, 914), (6, 810), (7, 735), (8, 678),
    )),
    PayoutRow(60, 79, (
        (1, 2604), (2, 1641), (3, 1229), (4, 1001), (5, 858), (6, 759), (7, 687), (8, 632),
        (9, 589),
    )),
    PayoutRow(80, 99, (
        (1, 2522), (2, 1493), (3, 1073), (4, 848), (5, 710), (6, 617), (7, 550), (8, 501), (9, 462),
        (12, 408),
    )),
    PayoutRow(100, 119, (
        (1, 2459), (2, 1404), (3, 984), (4, 764), (5, 630), (6, 541), (7, 477), (8, 430), (9, 394),
        (12, 344), (15, 295),
    )),
    PayoutRow(120, 179, (
        (1, 2408), (2, 1343), (3, 926), (4, 710), (5, 579), (6, 492), (7, 431), (8, 386), (9, 352),
        (12, 304), (15, 258), (18, 229),
    )),
    PayoutRow(180, 239, (
        (1, 2299), (2, 1236), (3, 830), (4, 621), (5, 497), (6, 415), (7, 358), (8, 316), (9, 284),
        (12, 241), (15, 199), (18, 173), (27, 145),
    )),
    PayoutRow(240, 299, (
        (1, 2229), (2, 1176), (3, 779), (4, 577), (5, 457), (6, 378), (7, 323), (8, 283), (9, 252),
        (12, 211), (15, 171), (18, 146), (27, 119), (36, 99),
    )),
    PayoutRow(300, 359, (
        (1, 2167), (2, 1135), (3, 747), (4, 549), (5, 432), (6, 356), (7, 302), (8, 263), (9, 233),
        (12, 193), (15, 154), (18, 130), (27, 105), (36, 85), (45, 75),
    )),
    PayoutRow(360, 419, (
        (1, 2124), (2, 1103), (3, 724), (4, 530), (5, 415), (6, 340), (7, 288), (8, 250), (9, 221),
        (12, 181), (15, 143), (18, 120), (27, 95), (36, 76), (45, 66), (54, 60),
    )),
    PayoutRow(420, 479, (
        (1, 2091), (2, 1078), (3, 706), (4, 516), (5, 403), (6, 329), (7, 278), (8, 241), (9, 212),
        (12, 173), (15, 136), (18, 113), (27, 88), (36, 69), (45, 59), (54, 54), (63, 50),
    )),
    PayoutRow(480, 539, (
        (1, 2060), (2, 1057), (3, 691), (4, 504), (5, 393), (6, 321), (7, 270), (8, 233), (9, 205),
        (12, 167), (15, 130), (18, 108), (27, 83), (36, 64), (45, 55), (54, 49), (63, 45), (72, 43),
    )),
    PayoutRow(540, 599, (
        (1, 2015), (2, 1039), (3, 679), (4, 495), (5, 386), (6, 314), (7, 264), (8, 228), (9, 200),
        (12, 162), (15, 126), (18, 104), (27, 79), (36, 61), (45, 51), (54, 46), (63, 42), (72, 39),
        (81, 38),
    )),
    PayoutRow(600, 719, (
        (1, 1994), (2, 1024), (3, 668), (4, 487), (5, 379), (6, 309), (7, 259), (8, 223), (9, 196),
        (12, 158), (15, 122), (18, 100), (27, 76), (36, 58), (45, 48), (54, 43), (63, 39), (72, 37),
        (81, 35), (90, 33),
    )),
    PayoutRow(720, 839, (
        (1, 1979), (2, 1002), (3, 653), (4, 475), (5, 369), (6, 300), (7, 251), (8, 216), (9, 189),
        (12, 152), (15, 117), (18, 95), (27, 71), (36, 53), (45, 44), (54, 38), (63, 35), (72, 32),
        (81, 30), (90, 29), (108, 27),
    )),
    PayoutRow(840, 959, (
        (1, 1948), (2, 984), (3, 641), (4, 466), (5, 361), (6, 293), (7, 245), (8, 210), (9, 184),
        (12, 147), (15, 112), (18, 91), (27, 68), (36, 50), (45, 41), (54, 35), (63, 32), (72, 29),
        (81, 27), (90, 26), (108, 24), (126, 23),
    )),
    PayoutRow(960, 1079, (
        (1, 1923), (2, 969), (3, 631), (4, 458), (5, 355), (6, 288), (7, 241), (8, 206), (9, 180),
        (12, 144), (15, 109), (18, 88), (27, 65), (36, 47), (45, 38), (54, 33), (63, 29), (72, 27),
        (81, 25), (90, 24), (108, 22), (126, 21), (144, 20),
    )),
    PayoutRow(1080, 1199, (
        (1, 1927), (2, 956), (3, 623), (4, 452), (5, 350), (6, 284), (7, 237), (8, 203), (9, 177),
        (12, 141), (15, 107), (18, 86), (27, 63), (36, 45), (45, 36), (54, 31), (63, 28), (72, 25),
        (81, 23), (90, 22), (108, 20), (126, 19), (144, 18), (162, 17),
    )),
    PayoutRow(1200, 1439, (
        (1, 1869), (2, 945), (3, 615), (4, 447), (5, 346), (6, 280), (7, 234), (8, 200), (9, 174),
        (12, 139), (15, 105), (18, 84), (27, 62), (36, 44), (45, 35), (54, 30), (63, 26), (72, 24),
        (81, 22), (90, 21), (108, 19), (126, 18), (144, 17), (162, 16), (180, 15),
    )),
    PayoutRow(1440, 1679, (
        (1, 1845), (2, 926), (3, 603), (4, 438), (5, 339), (6, 274), (7, 229), (8, 196), (9, 170),
        (12, 135), (15, 102), (18, 82), (27, 59), (36, 42), (45, 33), (54, 27), (63, 24), (72, 22),
        (81, 20), (90, 18), (108, 17), (126, 16), (144, 15), (162, 14), (180, 13), (216, 13),
    )),
    PayoutRow(1680, 1919, (
        (1, 1853), (2, 910), (3, 593), (4, 431), (5, 334), (6, 270), (7, 225), (8, 192), (9, 167),
        (12, 133), (15, 100), (18, 80), (27, 57), (36, 40), (45, 31), (54, 26), (63, 23), (72, 20),
        (81, 18), (90, 17), (108, 16), (126, 14), (144, 13), (162, 12), (180, 12), (216, 11),
        (252, 11),
    )),
    PayoutRow(1920, 2159, (
        (1, 1852), (2, 896), (3, 585), (4, 425), (5, 329), (6, 266), (7, 222), (8, 190), (9, 165),
        (12, 131), (15, 98), (18, 78), (27, 56), (36, 39), (45, 30), (54, 25), (63, 21), (72, 19),
        (81, 17), (90, 16), (108, 14), (126, 13), (144, 12), (162, 11), (180, 11), (216, 10),
        (252, 10), (288, 9),
    )),
    PayoutRow(2160, 2399, (
        (1, 1858), (2, 884), (3, 578), (4, 420), (5, 325), (6, 263), (7, 219), (8, 187), (9, 163),
        (12, 129), (15, 97), (18, 77), (27, 55), (36, 38), (45, 29), (54, 24), (63, 21), (72, 18),
        (81, 16), (90, 15), (108, 14), (126, 12), (144, 11), (162, 10), (180, 10), (216, 9),
        (252, 9), (288, 8), (324, 8),
    )),
    PayoutRow(2400, 2879, (
        (1, 1839), (2, 873), (3, 571), (4, 415), (5, 322), (6, 260), (7, 217), (8, 185), (9, 161),
        (12, 128), (15, 96), (18, 76), (27, 54), (36, 37), (45, 28), (54, 23), (63, 20), (72, 17),
        (81, 16), (90, 14), (108, 13), (126, 11), (144, 11), (162, 10), (180, 9), (216, 9),
        (252, 8), (288, 8), (324, 7), (360, 7),
    )),
    PayoutRow(2880, 3359, (
        (1, 1818), (2, 855), (3, 560), (4, 408), (5, 316), (6, 256), (7, 214), (8, 182), (9, 159),
        (12, 126), (15, 94), (18, 75), (27, 53), (36, 36), (45, 27), (54, 22), (63, 19), (72, 16),
        (81, 15), (90, 13), (108, 12), (126, 10), (144, 10), (162, 9), (180, 8), (216, 8), (252, 7),
        (288, 7), (324, 6), (360, 6), (432, 6),
    )),
    PayoutRow(3360, 3839, (
        (1, 1826), (2, 840), (3, 551), (4, 401), (5, 312), (6, 252), (7, 211), (8, 180), (9, 156),
        (12, 124), (15, 93), (18, 73), (27, 52), (36, 35), (45, 27), (54, 22), (63, 18), (72, 16),
        (81, 14), (90, 13), (108, 11), (126, 10), (144, 9), (162, 8), (180, 8), (216, 7), (252, 6),
        (288, 6), (324, 6), (360, 5), (432, 5), (504, 5),
    )),
    PayoutRow(3840, 4319, (
        (1, 1872), (2, 826), (3, 543), (4, 396), (5, 308), (6, 249), (7, 208), (8, 178), (9, 155),
        (12, 123), (15, 92), (18, 73), (27, 51), (36, 35), (45, 26), (54, 21), (63, 18), (72, 15),
        (81, 13), (90, 12), (108, 11), (126, 9), (144, 8), (162, 8), (180, 7), (216, 6), (252, 6),
        (288, 5), (324, 5), (360, 5), (432, 5), (504, 4), (576, 4),
    )),
    PayoutRow(4320, 4799, (
        (1, 1829), (2, 815), (3, 536), (4, 391), (5, 304), (6, 247), (7, 206), (8, 176), (9, 153),
        (12, 121), (15, 91), (18, 72), (27, 51), (36, 34), (45, 26), (54, 21), (63, 17), (72, 15),
        (81, 13), (90, 12), (108, 10), (126, 9), (144, 8), (162, 7), (180, 7), (216, 6), (252, 5),
        (288, 5), (324, 5), (360, 4), (432, 4), (504, 4), (576, 4), (648, 4),
    )),
    PayoutRow(4800, 5000, (
        (1, 1887), (2, 804), (3, 530), (4, 387), (5, 301), (6, 244), (7, 204), (8, 175), (9, 152),
        (12, 120), (15, 90), (18, 71), (27, 50), (36, 34), (45, 25), (54, 20), (63, 17), (72, 15),
        (81, 13), (90, 11), (108, 10), (126, 9), (144, 8), (162, 7), (180, 6), (216, 6), (252, 5),
        (288, 5), (324, 4), (360, 4), (432, 4), (504, 4), (576, 3), (648, 3), (720, 3),
    )),
)
# fmt: on
SCHEDULED = PayoutTable("scheduled", _SCHEDULED_ROWS)

PAYOUT_TABLES: Mapping[str, PayoutTable] = MappingProxyType(
    {table.name: table for table in (SIT_AND_GO, SCHEDULED)}
)


def find_payout_table(name: str) -> PayoutTable:
    try:
        return PAYOUT_TABLES[name]
    except (KeyError, TypeError):
        raise PayoutError(
            "payout_table", "must be one of " + ", ".join(sorted(PAYOUT_TABLES))
        ) from None
