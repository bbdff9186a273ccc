"""The round and match state machine.

A :class:`State` is a whole match in progress: the current round's hands,
boneyard and layout, the scores, and the log of what was played. It is
mutated in place by :meth:`State.apply` and copied with :meth:`State.clone`
(search bots clone it thousands of times a second, so both stay lean).

At every decision exactly one seat acts (``to_act``). Its legal actions are
the placements it can make, else ``DRAW`` while the boneyard lasts, else
``PASS``. A drawn tile that fits must be placed at once. A blocked round ends
as soon as it is blocked, and a side reaching the target ends the match on
the spot, in the middle of a round if need be.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from .deal import Deal, DealError, allowed_leaders, check_deal, seeded_deal
from .layout import Layout
from .rules import Rules, make_rules
from .scoring import POINTS_FOR_TOTAL, RoundResult, block_award, domino_award
from .tiles import (
    DRAW,
    FIT_ACTIONS,
    OTHER_HALF,
    PASS,
    PIPS,
    SLOT_NAMES,
    SUIT_MASK,
    TILE_TEXT,
    action_from_text,
    action_to_text,
    mask_to_tiles,
    tiles_to_mask,
)


def lacks_after(lacks: int, action: int, layout: Layout) -> int:
    """What a seat is known to lack after taking ``action`` on ``layout`` (bit v: no tile with value v).

    A pass adds the values open on the layout. A draw replaces the seat's lacks
    with them: it could not place, but the tile it draws may show any value
    that is not open. A placement tells nothing new.
    """
    if action == PASS:
        return lacks | layout.open_values()
    if action == DRAW:
        return layout.open_values()
    return lacks


class IllegalActionError(ValueError):
    """An action that is not legal now; the state is left as it was."""


@dataclass(frozen=True)
class RoundLog:
    """One finished (or, for the current round, running) round: its deal and its moves."""

    deal: Deal
    moves: tuple[tuple[int, int], ...]  # (seat, action) in order
    result: RoundResult | None


class SeatView(NamedTuple):
    """Everything one seat may know, and nothing else.

    This is the single place that decides what is hidden: observation
    encoders, bots and the trainer all start from it. (A named tuple, because
    a view is built at every decision.)
    """

    seat: int
    rules: Rules
    hand: int  # mask of this seat's tiles
    hand_counts: tuple[int, ...]  # tiles held by each seat
    boneyard_left: int
    layout: Layout  # a private copy
    lacks: tuple[int, ...]  # per seat: bit v set when it is known to hold no tile with value v
    scores: tuple  # per side
    round_index: int
    to_act: int
    drawn: int  # the tile this seat drew and must place now, else -1
    legal: tuple[int, ...]  # this seat's legal actions (empty when it is not to act)
    move_codes: tuple[int, ...]  # this round's public moves, each seat * 128 + action
    leader: int
    required_lead: int = -1  # for the seat about to lead: the tile the lead must be, else -1

    @property
    def moves(self) -> tuple[tuple[int, int], ...]:
        """This round's public moves as (seat, action), oldest first."""
        return tuple(divmod(code, 128) for code in self.move_codes)


class State:
    __slots__ = (
        "rules",
        "seed",
        "fixed_deals",
        "scores",
        "round_index",
        "deal",
        "hands",
        "boneyard",
        "bone_pos",
        "layout",
        "to_act",
        "drawn",
        "lacks",
        "moves",
        "past",
        "required_lead",
        "finished",
        "winners",
        "round_limit",
        "_legal",
    )

    def __init__(
        self,
        rules: Rules | None = None,
        seed: int = 0,
        deals: dict[int, Deal] | None = None,
        round_limit: int | None = None,
    ) -> None:
        """A new match. ``deals`` fixes the deals of chosen rounds (by index); others come from ``seed``.

        ``round_limit`` stops play after that many rounds (single-round
        episodes): the state is then ``finished`` with no ``winners`` unless
        a side reached the target.
        """
        if round_limit is not None and (
            isinstance(round_limit, bool) or not isinstance(round_limit, int) or round_limit < 1
        ):
            raise ValueError(f"round_limit={round_limit!r} is not allowed; allowed: None or a positive integer")
        self.round_limit = round_limit
        self.rules = rules if rules is not None else make_rules()
        self.seed = seed
        self.fixed_deals = dict(deals or {})
        self.scores: list = [0] * self.rules.num_sides
        self.past: tuple[RoundLog, ...] = ()
        self.finished = False
        self.winners: tuple[int, ...] = ()
        self._start_round(0, None)

    # -- construction --------------------------------------------------------

    def clone(self) -> State:
        other = State.__new__(State)
        other.rules = self.rules
        other.seed = self.seed
        other.fixed_deals = self.fixed_deals
        other.scores = self.scores[:]
        other.round_index = self.round_index
        other.deal = self.deal
        other.hands = self.hands[:]
        other.boneyard = self.boneyard
        other.bone_pos = self.bone_pos
        other.layout = self.layout.copy()
        other.to_act = self.to_act
        other.drawn = self.drawn
        other.lacks = self.lacks[:]
        other.moves = self.moves[:]
        other.past = self.past
        other.required_lead = self.required_lead
        other.finished = self.finished
        other.winners = self.winners
        other.round_limit = self.round_limit
        other._legal = self._legal
        return other

    def fix_deal(self, round_index: int, deal: Deal) -> None:
        """Fix the deal of a round not yet started (a record's replay reads each deal when it comes).

        It is checked against the rules when that round starts. Clones made
        before keep the deals they had.
        """
        if round_index <= self.round_index:
            raise ValueError(f"round {round_index} has already started; allowed: a later round")
        self.fixed_deals = {**self.fixed_deals, round_index: deal}

    @classmethod
    def from_view(
        cls,
        view: SeatView,
        hands: list[int],
        boneyard: tuple[int, ...],
        seed: int = 0,
        round_limit: int | None = None,
    ) -> State:
        """A full state that agrees with ``view``, the hidden tiles placed as given.

        This is how a search bot *determinizes*: it samples the tiles it cannot
        see (``hands`` as masks, the viewer's own included, and the boneyard
        in draw order) and plays the result out. Later rounds come from
        ``seed``; ``round_limit=1`` stops at the end of this round.
        """
        if hands[view.seat] != view.hand:
            raise ValueError("a determinized state must keep the viewer's own hand")
        if [h.bit_count() for h in hands] != list(view.hand_counts) or len(boneyard) != view.boneyard_left:
            raise ValueError("hidden tiles do not match the view's hand counts and boneyard size")
        state = cls.__new__(cls)
        state.rules = view.rules
        state.seed = seed
        state.fixed_deals = {}
        state.scores = list(view.scores)
        state.past = ()
        state.finished = False
        state.winners = ()
        state.round_limit = round_limit
        state.round_index = view.round_index
        state.deal = Deal(tuple(tuple(mask_to_tiles(h)) for h in hands), tuple(boneyard), view.leader)
        state.hands = list(hands)
        state.boneyard = tuple(boneyard)
        state.bone_pos = 0
        state.layout = view.layout.copy()
        state.to_act = view.to_act
        state.drawn = view.drawn
        state.lacks = list(view.lacks)
        state.moves = list(view.move_codes)
        state.required_lead = view.required_lead
        state._legal = None
        return state

    def _start_round(self, index: int, previous: RoundResult | None) -> None:
        deal = self.fixed_deals.get(index)
        if deal is None:
            deal = seeded_deal(self.rules, self.seed, index, previous)
        else:
            check_deal(self.rules, deal, index, previous)
        _, self.required_lead = allowed_leaders(self.rules, index, deal.hands, previous)
        self.round_index = index
        self.deal = deal
        self.hands = [tiles_to_mask(hand) for hand in deal.hands]
        self.boneyard = deal.boneyard
        self.bone_pos = 0
        self.layout = Layout()
        self.to_act = deal.leader
        self.drawn = -1
        self.lacks = [0] * self.rules.num_players
        self.moves: list[int] = []  # seat * 128 + action, compact for cheap clones
        self._legal = None

    # -- questions -----------------------------------------------------------

    @property
    def boneyard_left(self) -> int:
        return len(self.boneyard) - self.bone_pos

    @property
    def end_total(self) -> int:
        return self.layout.end_total

    def hand_tiles(self, seat: int) -> list[int]:
        return mask_to_tiles(self.hands[seat])

    def hand_pips(self, seat: int) -> int:
        return sum(PIPS[t] for t in mask_to_tiles(self.hands[seat]))

    def legal_actions(self) -> list[int]:
        """The acting seat's legal actions, ascending; empty once the match is over."""
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        return legal

    def _compute_legal(self) -> list[int]:
        if self.finished:
            return []
        layout = self.layout
        if self.drawn >= 0:
            tile = self.drawn
            return [tile * 4 + slot for slot, v in enumerate(layout.values) if v >= 0 and OTHER_HALF[tile][v] >= 0]
        hand = self.hands[self.to_act]
        if layout.lead < 0:
            if self.required_lead >= 0:
                return [self.required_lead * 4]
            return [t * 4 for t in mask_to_tiles(hand)]
        actions: list[int] = []
        for slot, v in enumerate(layout.values):
            if v >= 0:
                fit = hand & SUIT_MASK[v]
                if fit:
                    actions += FIT_ACTIONS[slot][v][fit]
        if actions:
            actions.sort()
            return actions
        return [DRAW] if self.bone_pos < len(self.boneyard) else [PASS]

    def view(self, seat: int) -> SeatView:
        """What ``seat`` may know now."""
        acting = seat == self.to_act and not self.finished
        return SeatView(
            seat,
            self.rules,
            self.hands[seat],
            tuple([h.bit_count() for h in self.hands]),
            len(self.boneyard) - self.bone_pos,
            self.layout.copy(),
            tuple(self.lacks),
            tuple(self.scores),
            self.round_index,
            self.to_act,
            self.drawn if acting else -1,
            tuple(self.legal_actions()) if acting else (),
            tuple(self.moves),
            self.deal.leader,
            self.required_lead if acting and self.layout.lead < 0 else -1,
        )

    # -- the one way to change a state ----------------------------------------

    def apply(self, action: int) -> None:
        """Take the acting seat's action; raise IllegalActionError (state untouched) if it is not legal."""
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        if action not in legal:
            raise IllegalActionError(self._illegal_message(action))
        action = int(action)
        if self.fixed_deals and self.round_index + 1 in self.fixed_deals:
            # The next round's given deal is checked when this round ends; if the
            # rules refuse it, the error must leave this state as it was.
            before = self.clone()
            try:
                self._take(action)
            except DealError:
                for name in State.__slots__:
                    setattr(self, name, getattr(before, name))
                raise
        else:
            self._take(action)

    def _take(self, action: int) -> None:
        seat = self.to_act
        self.moves.append(seat * 128 + action)
        self._legal = None
        if action == DRAW:
            self._draw(seat)
        elif action == PASS:
            self.lacks[seat] = lacks_after(self.lacks[seat], PASS, self.layout)
            self.to_act = (seat + 1) % self.rules.num_players
        else:
            self._place(seat, action >> 2, action & 3)

    def _draw(self, seat: int) -> None:
        layout = self.layout
        self.lacks[seat] = lacks_after(self.lacks[seat], DRAW, layout)
        tile = self.boneyard[self.bone_pos]
        self.bone_pos += 1
        self.hands[seat] |= 1 << tile
        if layout.playable_mask() >> tile & 1:
            self.drawn = tile
        elif self.bone_pos == len(self.boneyard) and self._blocked():
            self._end_round(block_award(self.rules, self._seat_pips()))

    def _place(self, seat: int, tile: int, slot: int) -> None:
        self.hands[seat] &= ~(1 << tile)
        self.drawn = -1
        layout = self.layout
        points = POINTS_FOR_TOTAL[layout.place(tile, slot)]
        if points:
            side = self.rules.side_of[seat]
            self.scores[side] += points
            if self.scores[side] >= self.rules.target:
                result = RoundResult("target", side, 0, (0,) * self.rules.num_sides, seat_pips=tuple(self._seat_pips()))
                self._finish_match(result)
                return
        if not self.hands[seat]:
            self._end_round(domino_award(self.rules, seat, self._seat_pips()))
        elif self.bone_pos == len(self.boneyard) and self._blocked():
            self._end_round(block_award(self.rules, self._seat_pips()))
        else:
            self.to_act = (seat + 1) % self.rules.num_players

    def _blocked(self) -> bool:
        held = 0
        for hand in self.hands:
            held |= hand
        return not held & self.layout.playable_mask()

    def _seat_pips(self) -> list[int]:
        return [sum(PIPS[t] for t in mask_to_tiles(h)) for h in self.hands]

    def _end_round(self, result: RoundResult) -> None:
        for side, gain in enumerate(result.gains):
            if gain:
                self.scores[side] += gain
        target = self.rules.target
        if any(score >= target for score in self.scores):
            self._finish_match(result)
            return
        self.past = self.past + (RoundLog(self.deal, self.round_moves(), result),)
        if self.round_limit is not None and len(self.past) >= self.round_limit:
            self.finished = True  # stopped, the table left as the round ended; no side won the match
            self._legal = []
        else:
            self._start_round(self.round_index + 1, result)

    def _finish_match(self, result: RoundResult) -> None:
        self.past = self.past + (RoundLog(self.deal, self.round_moves(), result),)
        self.finished = True
        self._legal = []
        target = self.rules.target
        reached = [side for side, score in enumerate(self.scores) if score >= target]
        best = max(self.scores[side] for side in reached)
        self.winners = tuple(side for side in reached if self.scores[side] == best)

    # -- text --------------------------------------------------------------------

    def round_moves(self) -> tuple[tuple[int, int], ...]:
        """This round's moves so far as (seat, action)."""
        return tuple(divmod(m, 128) for m in self.moves)

    def action_text(self, action: int) -> str:
        """The action's text here: a bare tile for a lead, the matching half first otherwise."""
        if action in (DRAW, PASS) or self.layout.lead >= 0 and not 0 <= action < DRAW:
            return action_to_text(action)
        if self.layout.lead < 0:
            return action_to_text(action, lead=True)
        tile, slot = action >> 2, action & 3
        v = self.layout.values[slot]
        if v >= 0 and OTHER_HALF[tile][v] >= 0:
            return f"{v}-{OTHER_HALF[tile][v]} {SLOT_NAMES[slot]}"
        return action_to_text(action)

    def parse_action(self, text: str) -> int:
        """Read an action text in this position, resolving a bare tile.

        A bare tile is the lead, or a placement if the tile fits exactly one
        open end; one that fits several ends is ambiguous and refused.
        """
        action = action_from_text(text)
        if action >= DRAW or len(str(text).split()) == 2:
            return action
        tile = action >> 2
        if self.layout.lead < 0:
            return tile * 4
        slots = self.layout.fits(tile)
        if len(slots) == 1:
            return tile * 4 + slots[0]
        if not slots:
            return tile * 4  # fits nowhere: reported as illegal by apply
        names = ", ".join(f"'{TILE_TEXT[tile]} {SLOT_NAMES[s]}'" for s in slots)
        raise IllegalActionError(f"'{str(text).strip()}' is ambiguous: {TILE_TEXT[tile]} fits {names}; name the end")

    def _illegal_message(self, action) -> str:
        if self.finished:
            return f"action {action!r} is illegal: the match is over"
        try:
            shown = f"{action} ({self.action_text(action)})"
        except (ValueError, TypeError):
            shown = repr(action)
        legal = ", ".join(f"{a} ({self.action_text(a)})" for a in self.legal_actions())
        return f"action {shown} is illegal for seat {self.to_act}; legal actions: {legal}"

    def __repr__(self) -> str:
        hands = " | ".join(" ".join(TILE_TEXT[t] for t in mask_to_tiles(h)) for h in self.hands)
        return (
            f"State({self.rules.rules}, {self.rules.num_players}p, round {self.round_index}, "
            f"to_act={self.to_act}, scores={self.scores}, hands=[{hands}])"
        )
