"""Fleets: many robots and dated identifications on Dask, drift across re-identifications (docs/fleet.md)."""
