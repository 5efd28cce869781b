"""Provisioned throughput of a managed API as a commitment of the mix: priced per demand unit from its model unit's
price and rate, bought in whole units for its term, dispatched before on demand. Figures worked out by hand."""

from __future__ import annotations

from decimal import Decimal as D

import pytest

from finops.api import optimize_mix
from finops.errors import InputError
from finops.mix.options import MixOption, read_options_csv
from finops.mix.provisioned_throughput import ProvisionedThroughput

#: 2.00 USD per model unit-hour, 1,000 output tokens/s per unit; a demand unit (a replica) serves 2,500 tokens/s,
#: so it takes 2.5 model units: 5.00 USD per demand unit-hour, half the on-demand 10.00
PT = ProvisionedThroughput("bedrock-pt-6m", D("2.00"), term_months=6, tokens_per_s_per_unit=1_000.0)


def test_provisioned_throughput_covers_the_units_busy_more_than_its_break_even_share():
    od = MixOption("od", "on_demand", D(10))
    demand = [10.0] * 4380 + [4.0] * 4380  # 10 units half the year, 4 the other half
    mix = optimize_mix(demand, [od, PT.as_mix_option(tokens_per_s_per_demand_unit=2_500.0)])
    by_name = {o.name: o for o in mix.outcomes}
    # units 1-4 busy every hour (share 1 > 5/10) are committed; units 5-10 busy half the time (0.5, not above 0.5)
    assert by_name["bedrock-pt-6m"].units == 4
    assert by_name["bedrock-pt-6m"].cost.amount == D(4 * 5 * 8760)
    assert by_name["od"].cost.amount == D(6 * 4380 * 10)


def test_the_options_csv_takes_provisioned_throughput_as_a_commitment(tmp_path):
    path = tmp_path / "options.csv"
    path.write_text("name,kind,hourly_cost,term_hours\nod,on_demand,10,\nvertex-pt,pt,5,730\n")
    od, pt = read_options_csv(path)
    assert (pt.kind, pt.committed, pt.term_hours) == ("provisioned_throughput", True, 730)


def test_a_provisioned_throughput_without_a_rate_is_refused():
    with pytest.raises(InputError, match="tokens/s per unit > 0"):
        ProvisionedThroughput("pt", D(2), term_months=1, tokens_per_s_per_unit=0.0)
