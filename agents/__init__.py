"""Agents: everything that chooses an action from one seat's view."""

from .base import Agent
