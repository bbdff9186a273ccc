"""Agents: everything that chooses an action from one seat's view."""

from .base import Agent
from .greedy import GreedyAgent
from .heuristic import HeuristicAgent
from .random_agent import RandomAgent
from .registry import AGENT_NAMES, make_agent
from .search import SearchAgent

__all__ = ["AGENT_NAMES", "Agent", "GreedyAgent", "HeuristicAgent", "RandomAgent", "SearchAgent", "make_agent"]
