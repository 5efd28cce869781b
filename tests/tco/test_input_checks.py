"""Every check on the inputs of finops/tco/ with the message and hint a user reads (finops/tco/_inputs.py and
the checks of cloud.py, levers.py, unit_cost.py and compare.py), and the values the checks let through."""
from __future__ import annotations

from decimal import Decimal

import pytest

from finops.errors import CurrencyMismatchError, InputError
from finops.money import Money
from finops.tco import (
    SpotPolicy,
    amortized_hourly,
    blended_hourly,
    compare_options,
    cost_per_gpu_hour,
    cost_per_million_tokens,
    cost_per_million_tokens_at_average,
    cost_per_replica_month,
    load_shaping,
    prefill_time_share,
    prefix_cache,
    quantization,
    reserved_schedule,
    resource_commitment_cost,
    right_sizing,
    spend_commitment_cost,
    spot_effective_hourly,
    token_costs,
    utilization,
)
from finops.tco._inputs import money, number, positive, share, whole
from finops.tco.reference import reference_case

SHARE_HINT = "write 80 % as 0.8"
MONEY_HINT = "use Money.of(amount, currency)"
CURRENCY_HINT = "convert one side explicitly first"


def usd(amount) -> Money:
    return Money.of(amount, "USD")


def eur(amount) -> Money:
    return Money.of(amount, "EUR")


# ---- the shared checks: what passes ---------------------------------------------------------------

@pytest.mark.parametrize("call,expected", [
    (lambda: number(3, "x"), Decimal(3)),
    (lambda: number(0.1, "x"), Decimal("0.1")),                 # a float through its shortest repr
    (lambda: number("1,234.5", "x"), Decimal("1234.5")),
    (lambda: number(Decimal("-2.5"), "x"), Decimal("-2.5")),
    (lambda: positive(2, "x"), Decimal(2)),
    (lambda: positive(0, "x", allow_zero=True), Decimal(0)),
    (lambda: share(0, "x"), Decimal(0)),                         # both ends of [0, 1] are shares
    (lambda: share(1, "x"), Decimal(1)),
    (lambda: share("0.8", "x"), Decimal("0.8")),
    (lambda: share(0, "x", below_one=True), Decimal(0)),
    (lambda: share(1, "x", above_zero=True), Decimal(1)),
    (lambda: share(0.5, "x", below_one=True, above_zero=True), Decimal("0.5")),
    (lambda: whole(1, "x"), 1),
    (lambda: whole(0, "x", minimum=0), 0),
    (lambda: whole(7, "x", minimum=7), 7),
])
def test_a_valid_value_comes_back_as_a_number(call, expected):
    got = call()
    assert got == expected and type(got) is type(expected)


def test_money_comes_back_unchanged():
    assert money(usd(5), "x") == usd(5)
    assert money(usd(0), "x", "USD") == usd(0)                  # zero is not negative
    assert money(usd(-5), "x", allow_negative=True) == usd(-5)
    assert money(eur(2), "x") == eur(2)                         # no currency asked: any


# ---- the shared checks: what fails ----------------------------------------------------------------

@pytest.mark.parametrize("call,message,hint", [
    (lambda: number(True, "rate"), "rate must be a number, got True", None),
    (lambda: number([1], "rate"), "rate must be a number, got [1]", None),
    (lambda: number(None, "rate"), "rate must be a number, got None", None),
    (lambda: number("nan", "rate"), "rate must be a finite number, got 'nan'", None),
    (lambda: number("fast", "rate"), "rate must be a finite number, got 'fast'", None),
    (lambda: positive(0, "rate"), "rate must be > 0, got 0", None),
    (lambda: positive(-1, "rate"), "rate must be > 0, got -1", None),
    (lambda: positive(-0.5, "rate", allow_zero=True), "rate must be >= 0, got -0.5", None),
    (lambda: share("lots", "load"), "load must be a finite number, got 'lots'", None),
    (lambda: share(-0.01, "load"), "load must be a share in [0, 1], got -0.01", SHARE_HINT),
    (lambda: share(80, "load"), "load must be a share in [0, 1], got 80", SHARE_HINT),
    (lambda: share(1.01, "load"), "load must be a share in [0, 1], got 1.01", SHARE_HINT),
    (lambda: share(1, "load", below_one=True), "load must be a share in [0, 1), got 1", SHARE_HINT),
    (lambda: share(0, "load", above_zero=True), "load must be a share in (0, 1], got 0", SHARE_HINT),
    (lambda: share(0, "load", below_one=True, above_zero=True), "load must be a share in (0, 1), got 0",
     SHARE_HINT),
    (lambda: share(1, "load", below_one=True, above_zero=True), "load must be a share in (0, 1), got 1",
     SHARE_HINT),
    (lambda: whole(0, "units"), "units must be a whole number >= 1, got 0", None),
    (lambda: whole(True, "units"), "units must be a whole number >= 1, got True", None),
    (lambda: whole(2.0, "units"), "units must be a whole number >= 1, got 2.0", None),
    (lambda: whole(6, "units", minimum=7), "units must be a whole number >= 7, got 6", None),
    (lambda: money(5, "fee"), "fee must be Money, got int 5", MONEY_HINT),
    (lambda: money("5 USD", "fee"), "fee must be Money, got str '5 USD'", MONEY_HINT),
    (lambda: money(usd("-0.01"), "fee"), "fee must not be negative, got -0.01 USD", None),
])
def test_a_bad_value_is_refused_naming_its_field(call, message, hint):
    with pytest.raises(InputError) as caught:
        call()
    assert type(caught.value) is InputError
    assert (caught.value.message, caught.value.hint) == (message, hint)


def test_money_in_another_currency_is_refused():
    with pytest.raises(CurrencyMismatchError) as caught:
        money(eur(1), "fee", "USD")
    assert (caught.value.message, caught.value.hint) == ("fee is in EUR but the rest is in USD", CURRENCY_HINT)


# ---- each function's checks ------------------------------------------------------------------------

NODE = reference_case().node


@pytest.mark.parametrize("call,message,hint", [
    # cloud.py
    (lambda: amortized_hourly(1000, usd(1), 8760), "upfront must be Money, got int 1000", MONEY_HINT),
    (lambda: amortized_hourly(usd(1), 2, 8760), "recurring_hourly must be Money, got int 2", MONEY_HINT),
    (lambda: amortized_hourly(usd(1), usd(1), 0), "term_hours must be a whole number >= 1, got 0", None),
    (lambda: reserved_schedule(usd(-1), usd(1), 12, 1), "upfront must not be negative, got -1.00 USD", None),
    (lambda: reserved_schedule(usd(1), usd(-1), 12, 1), "recurring must not be negative, got -1.00 USD", None),
    (lambda: reserved_schedule(usd(1), usd(1), 0, 1), "term_months must be a whole number >= 1, got 0", None),
    (lambda: reserved_schedule(usd(1), usd(1), 12, 0), "units must be a whole number >= 1, got 0", None),
    (lambda: reserved_schedule(usd(0), usd(0), 12, 1), None, None),
    (lambda: resource_commitment_cost(5, 1, usd(3), usd(5)), "hours must be a whole number >= 1, got None", None),
    (lambda: resource_commitment_cost(5, 1, usd(3), usd(5), hours=0), "hours must be a whole number >= 1, got 0",
     None),
    (lambda: resource_commitment_cost([], 1, usd(3), usd(5)), "the usage profile is empty",
     "give hourly units, or units and hours"),
    (lambda: resource_commitment_cost([1, 2, -2], 1, usd(3), usd(5)),
     "usage units must be finite and >= 0, got -2.0 in hour 2", None),
    (lambda: resource_commitment_cost([float("nan")], 1, usd(3), usd(5)),
     "usage units must be finite and >= 0, got nan in hour 0", None),
    (lambda: resource_commitment_cost([1, float("inf")], 1, usd(3), usd(5)),
     "usage units must be finite and >= 0, got inf in hour 1", None),
    (lambda: resource_commitment_cost([1], -1, usd(3), usd(5)), "committed_units must be >= 0, got -1", None),
    (lambda: resource_commitment_cost([1], 1, 3, usd(5)), "committed_rate must be Money, got int 3", MONEY_HINT),
    (lambda: resource_commitment_cost([1], 1, usd(3), 5), "on_demand_rate must be Money, got int 5", MONEY_HINT),
    (lambda: spend_commitment_cost([1], 4, usd(2), usd(5)), "commit_per_hour must be Money, got int 4", MONEY_HINT),
    (lambda: spend_commitment_cost([1], usd(4), 2, usd(5)), "discounted_rate must be Money, got int 2", MONEY_HINT),
    (lambda: spend_commitment_cost([1], usd(4), usd(2), 5), "on_demand_rate must be Money, got int 5", MONEY_HINT),
    (lambda: spend_commitment_cost([1], usd(4), usd(0), usd(5)), "discounted_rate must be > 0, got 0.00 USD", None),
    (lambda: spend_commitment_cost([1], usd(4), usd(2), usd(5), hours=3), None, None),
    (lambda: spend_commitment_cost(1, usd(4), usd(2), usd(5)), "hours must be a whole number >= 1, got None", None),
    (lambda: spend_commitment_cost([], usd(4), usd(2), usd(5)), "the usage profile is empty",
     "give hourly units, or units and hours"),
    (lambda: spot_effective_hourly(2, usd(6)), "spot_rate must be Money, got int 2", MONEY_HINT),
    (lambda: spot_effective_hourly(usd(2), 6), "on_demand_rate must be Money, got int 6", MONEY_HINT),
    (lambda: spot_effective_hourly(usd(2), usd(6), lost_work_share=1),
     "lost_work_share must be a share in [0, 1), got 1", SHARE_HINT),
    (lambda: spot_effective_hourly(usd(2), usd(6), fallback_share=1.5),
     "fallback_share must be a share in [0, 1], got 1.5", SHARE_HINT),
    (lambda: blended_hourly(6, usd(2), spot_share=0.1), "base_rate must be Money, got int 6", MONEY_HINT),
    (lambda: blended_hourly(usd(6), 2, spot_share=0.1), "spot_effective must be Money, got int 2", MONEY_HINT),
    (lambda: blended_hourly(usd(6), usd(2), spot_share=2), "spot_share must be a share in [0, 1], got 2",
     SHARE_HINT),
    (lambda: blended_hourly(usd(6), usd(2), spot_share=0.1, max_share=-1),
     "max_share must be a share in [0, 1], got -1", SHARE_HINT),
    (lambda: blended_hourly(usd(6), usd(2), spot_share=0.5, max_share=0.3),
     "spot_share 0.5 is above the spot cap max_share 0.3", "lower spot_share or raise the cap"),
    # levers.py
    (lambda: quantization(0, usd(1), 2), "gpus must be a whole number >= 1, got 0", None),
    (lambda: quantization(4, 1.0, 2), "cost_per_gpu_month must be Money, got float 1.0", MONEY_HINT),
    (lambda: quantization(4, usd(1), 0), "throughput_ratio must be > 0, got 0", None),
    (lambda: prefix_cache(1, 0.5, 0, 0.5), "monthly_cost must be Money, got int 1", MONEY_HINT),
    (lambda: prefix_cache(usd(1), 1.5, 0, 0.5), "prefill_share must be a share in [0, 1], got 1.5", SHARE_HINT),
    (lambda: prefix_cache(usd(1), 0.5, 1, 0.5), "hit_rate_before must be a share in [0, 1), got 1", SHARE_HINT),
    (lambda: prefix_cache(usd(1), 0.5, 0, -0.1), "hit_rate_after must be a share in [0, 1], got -0.1", SHARE_HINT),
    (lambda: utilization(1, 0.4, 0.8), "monthly_cost must be Money, got int 1", MONEY_HINT),
    (lambda: utilization(usd(1), 0, 0.8), "utilization_before must be a share in (0, 1], got 0", SHARE_HINT),
    (lambda: utilization(usd(1), 0.4, 0), "utilization_after must be a share in (0, 1], got 0", SHARE_HINT),
    (lambda: load_shaping(20, 8, 5, 1), "cost_per_unit_month must be Money, got int 1", MONEY_HINT),
    (lambda: load_shaping(0, 0, 0, usd(1)), "peak_units must be > 0, got 0", None),
    (lambda: load_shaping(20, -1, 5, usd(1)), "offpeak_units must be >= 0, got -1", None),
    (lambda: load_shaping(20, 8, -1, usd(1)), "shiftable_units must be >= 0, got -1", None),
    (lambda: load_shaping(10, 12, 1, usd(1)), "offpeak_units (12) must not exceed peak_units (10)", None),
    (lambda: load_shaping(10, 2, 11, usd(1)), "shiftable_units (11) must not exceed peak_units (10)", None),
    (lambda: right_sizing(0, usd(1), 1, 1, usd(1)), "instances must be a whole number >= 1, got 0", None),
    (lambda: right_sizing(1, 1, 1, 1, usd(1)), "cost_per_instance_month must be Money, got int 1", MONEY_HINT),
    (lambda: right_sizing(1, usd(1), 1, 1, 1), "candidate_cost_per_instance_month must be Money, got int 1",
     MONEY_HINT),
    (lambda: right_sizing(1, usd(1), 0, 1, usd(1)), "required_capacity must be > 0, got 0", None),
    (lambda: right_sizing(1, usd(1), 1, 0, usd(1)), "candidate_capacity must be > 0, got 0", None),
    # unit_cost.py
    (lambda: cost_per_gpu_hour(55, 8), "hourly_cost must be Money, got int 55", MONEY_HINT),
    (lambda: cost_per_gpu_hour(usd(55), 0), "gpus must be a whole number >= 1, got 0", None),
    (lambda: cost_per_replica_month(2, 4), "gpu_hour_cost must be Money, got int 2", MONEY_HINT),
    (lambda: cost_per_replica_month(usd(2), 0), "gpus_per_replica must be a whole number >= 1, got 0", None),
    (lambda: cost_per_million_tokens(7, 500), "hourly_cost must be Money, got int 7", MONEY_HINT),
    (lambda: cost_per_million_tokens(usd(7), 0), "tokens_per_s must be > 0, got 0", None),
    (lambda: cost_per_million_tokens_at_average(usd(36), 10_000, 0), "peak_to_average must be > 0, got 0", None),
    (lambda: cost_per_million_tokens_at_average(usd(36), 10_000, 0.5),
     "peak_to_average is peak over average, at least 1, got 0.5", "e.g. 2.5 for a peak 2.5 times the average"),
    (lambda: token_costs(usd(36), 8000, 2000, 0.2).at_average(0.99),
     "peak_to_average is peak over average, at least 1, got 0.99", "e.g. 2.5 for a peak 2.5 times the average"),
    (lambda: prefill_time_share(-1, 1, 1, 1), "input_tokens must be >= 0, got -1", None),
    (lambda: prefill_time_share(1, -1, 1, 1), "output_tokens must be >= 0, got -1", None),
    (lambda: prefill_time_share(1, 1, 0, 1), "prefill_tokens_per_s must be > 0, got 0", None),
    (lambda: prefill_time_share(1, 1, 1, 0), "decode_tokens_per_s must be > 0, got 0", None),
    (lambda: prefill_time_share(0, 0, 1, 1), "input_tokens and output_tokens are both 0",
     "a request has at least one token"),
    (lambda: token_costs(36, 8000, 2000, 0.2), "hourly_cost must be Money, got int 36", MONEY_HINT),
    (lambda: token_costs(usd(36), 8000, 2000, 2), "prefill_share must be a share in [0, 1], got 2", SHARE_HINT),
    (lambda: token_costs(usd(36), 0, 2000, 0.2), "input_tokens_per_s must be > 0, got 0", None),
    (lambda: token_costs(usd(36), -1, 2000, 0), "input_tokens_per_s must be >= 0, got -1", None),
    (lambda: token_costs(usd(36), 8000, 0, 0.2), "output_tokens_per_s must be > 0, got 0", None),
    (lambda: token_costs(usd(36), 8000, -1, 1), "output_tokens_per_s must be >= 0, got -1", None),
    # compare.py
    (lambda: SpotPolicy(lost_work_share=1), "spot lost_work_share must be a share in [0, 1), got 1", SHARE_HINT),
    (lambda: SpotPolicy(fallback_share=1.1), "spot fallback_share must be a share in [0, 1], got 1.1", SHARE_HINT),
    (lambda: SpotPolicy(max_share=-0.1), "spot max_share must be a share in [0, 1], got -0.1", SHARE_HINT),
    (lambda: compare_options(0, 12, NODE, []), "gpus must be a whole number >= 1, got 0", None),
    (lambda: compare_options(8, 0, NODE, []), "months must be a whole number >= 1, got 0", None),
    (lambda: compare_options(8, 12, None, []), "nothing to compare: no owned node and no cloud prices",
     "check the provider, region and instance type against `finops prices show`"),
])
def test_each_check_names_its_field(call, message, hint):
    if message is None:  # the control: the same call with valid values goes through
        call()
        return
    with pytest.raises(InputError) as caught:
        call()
    assert type(caught.value) is InputError
    assert (caught.value.message, caught.value.hint) == (message, hint)


@pytest.mark.parametrize("call,message", [
    (lambda: amortized_hourly(usd(1), eur(1), 8760), "recurring_hourly is in EUR but the rest is in USD"),
    (lambda: reserved_schedule(usd(1), eur(1), 12, 1), "recurring is in EUR but the rest is in USD"),
    (lambda: resource_commitment_cost([1], 1, usd(3), eur(5)), "on_demand_rate is in EUR but the rest is in USD"),
    (lambda: spend_commitment_cost([1], usd(4), eur(2), usd(5)), "discounted_rate is in EUR but the rest is in USD"),
    (lambda: spend_commitment_cost([1], usd(4), usd(2), eur(5)), "on_demand_rate is in EUR but the rest is in USD"),
    (lambda: spot_effective_hourly(usd(2), eur(6)), "on_demand_rate is in EUR but the rest is in USD"),
    (lambda: blended_hourly(usd(6), eur(2), spot_share=0.1), "spot_effective is in EUR but the rest is in USD"),
    (lambda: right_sizing(1, usd(1), 1, 1, Money.of(1, "JPY")),
     "candidate_cost_per_instance_month is in JPY but the rest is in USD"),
])
def test_money_in_two_currencies_is_refused(call, message):
    with pytest.raises(CurrencyMismatchError) as caught:
        call()
    assert (caught.value.message, caught.value.hint) == (message, CURRENCY_HINT)
