"""The browser app: play any bot, watch bots play, replay any record, read the leaderboard.

It sits above the bots (:mod:`agents`) and asks the rules core for every rule:
legal actions, action texts, scores and each seat's view. Start it with
``python -m allfives_env serve`` (needs the ``web`` extra).
"""
