# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The switch fabric stage: tenant networks on leaf switches (private to the collection).

One file per concern; imports point one way, module -> ``plan`` -> ``registry`` -> ``platforms/``
-> the neutral core -> ``errors``:

- ``errors``: ``FabricError``, ``IncompleteTenantError``, ``NativeConfigError``, ``NvueError``
  (all ``ProblemsError``, the collection's one error root);
- ``catalog``: the registry's data (which platforms exist, their files, releases, rules); data
  only, it imports nothing: the fleet model reads the platform list from it;
- ``model``: the neutral shape of a switch's tenants, ``normalise``, port groups (by value);
- ``validate``: every problem that stops rendering a switch, at once, in one path;
- ``ownership``: the marker, half tenants, and what every parser keeps (``Found``);
- ``cli``: a line-CLI line's writer and reader in one entry (EOS, FRR);
- ``platforms/{nvue,sonic,eos,frr}``: each platform's one writer, its ``delta`` and ``parse``;
- ``registry``: platform -> its module, and the calls that need one;
- ``plan``: the resource-module states, end to end (what ``switch_tenants`` does);
- ``nvue_api``: the NVUE REST API client (revision flow), used by ``nvue_config``.

This file imports nothing, so that importing ``catalog`` loads no code.
"""
