"""A command whose caller stopped waiting (a connection gone, a node's router giving up, a
node stopping) is still carried out, and disturbs nothing else: the hand in play goes on."""

from __future__ import annotations

import asyncio
import dataclasses

from golden_table import Scene

from engine.variants import TableConfig, find_variant
from server.table import commands
from server.table.ports import TableSettings


async def test_an_action_whose_caller_is_gone_is_played_and_the_hand_goes_on() -> None:
    scene = Scene(
        TableConfig(variant=find_variant("seven_card_stud")),
        dataclasses.replace(TableSettings(), seat_count=6, min_buy_in=20, max_buy_in=500),
    )
    await scene.start()
    try:
        for seat, player in enumerate(("ann", "bob", "cat")):
            await scene.do("sit", player, buy_in=200, seat=seat)
        await scene.wait(5.0)
        actor = scene.actor
        number = actor.hand_number
        player = scene.to_act()
        assert number == 1 and player is not None
        hand = actor.table.hand
        assert hand is not None
        kind = "bring_in" if "bring_in" in hand.legal_actions().kinds else "call"
        command = commands.Act(player=player, action_id="gone-1", kind=kind)
        caller = asyncio.create_task(actor.submit(command))
        await asyncio.sleep(0)  # in the inbox, its caller waiting for the answer
        caller.cancel()  # ...and gone before the table answers
        await scene.settle()
        assert caller.cancelled()
        assert actor.hands_cancelled == 0, "the hand was voided"
        assert actor.hand_number == number and actor.table.hand is hand
        assert scene.to_act() != player, "the action was not played"
        # A retry of it is answered as the action it was, not played twice.
        again = await actor.submit(command)
        assert again["accepted"] is True
    finally:
        await scene.actor.stop()
