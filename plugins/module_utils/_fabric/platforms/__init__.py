# -*- coding: utf-8 -*-
# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One module per platform of ``catalog.PLATFORMS``: ``render_text`` (its one writer), ``delta``,
``commands`` and ``parse``. Each imports only the neutral core; ``registry`` imports them."""
