"""Fleets: many agents, many workspaces, more than one machine (`deftly rollout`, a swarm on Ray).

Ray is an optional dependency (`pip install 'deftly[ray]'`); nothing here imports it until a
Ray backend is asked for.
"""
