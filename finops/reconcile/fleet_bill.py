"""A generated FOCUS 1.2 bill shaped like a large fleet's month, for the tests and the benchmark.

``rows`` charges from ``resources`` resources. Resource ``r = i % resources`` of row ``i`` keeps its
own provider (one in three Google Cloud), sub-account (one of ``resources // 50``, at least 20, named
like the demo plan's accounts), service, instance type, region and tags (``Owner``, ``Environment``,
``CostCenter`` and a ``Name`` of its own), so charge groups follow the resources, as in a real bill.
Row ``i`` is hour ``(i // resources) % 744`` of May 2026; one row in 33 (about 3 %) belongs to April
(a late charge of the month before). Costs vary per row (0 to 20 USD an hour, up to 7 decimals); one resource in 7 runs
on a commitment (one of its rows in 10 unused), one in 11 on spot; one row in 1,000 is a purchase,
one in 997 a tax. Everything is arithmetic on ``i`` (no ``hash``, no ``random``), so the same
arguments give the same bill in every DuckDB version.

DuckDB writes it streaming (``COPY (SELECT ... FROM range(rows)) TO ...``), so 100 M rows need no
more memory than 1,000.

>>> import duckdb, tempfile
>>> from pathlib import Path
>>> path = Path(tempfile.mkdtemp()) / "fleet.parquet"
>>> _ = duckdb.connect().execute(fleet_bill_sql(path, rows=990, resources=30))
>>> duckdb.connect().execute(f"SELECT count(*), count(DISTINCT ResourceId) FROM '{path}'").fetchone()
(990, 30)
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["fleet_bill_sql"]

_AWS = "['AmazonEC2', 'AmazonEC2', 'AmazonSageMaker', 'AmazonS3', 'AWSLambda', 'AmazonRDS', 'AmazonVPC']"
_GCP = "['Compute Engine', 'Compute Engine', 'BigQuery', 'Cloud Storage', 'Cloud Run', 'Cloud SQL', 'Networking']"
_AWS_TYPES = "['p5.48xlarge', 'p4d.24xlarge', 'g6.xlarge', 'g5.2xlarge', 'm6i.large', 'c7g.xlarge', 'r6i.2xlarge']"
_GCP_TYPES = "['a3-highgpu-8g', 'a2-highgpu-1g', 'g2-standard-4', 'n2-standard-8', 'e2-medium']"
_GPUS = ("CASE it WHEN 'p5.48xlarge' THEN 8 WHEN 'p4d.24xlarge' THEN 8 WHEN 'g6.xlarge' THEN 1 "
         "WHEN 'g5.2xlarge' THEN 1 END")
_MODELS = ("CASE it WHEN 'p5.48xlarge' THEN 'h100-sxm' WHEN 'p4d.24xlarge' THEN 'a100-40gb' "
           "WHEN 'g6.xlarge' THEN 'l4' WHEN 'g5.2xlarge' THEN 'a10g' END")

_SQL = """
COPY (
WITH base AS (
  SELECT i, i % {resources} AS r, (i // {resources}) % 744 AS h, i % 33 = 0 AS late,
         (i % {resources}) % 3 = 0 AS gcp, ((i % {resources}) // 3 * 7 + (i % {resources}) % 3) % {accounts} AS a
  FROM range({rows}) t(i)
), resource AS (
  SELECT *,
    CASE WHEN gcp THEN {gcp}[1 + (r // 3) % 7] ELSE {aws}[1 + (r // 3) % 7] END AS service,
    (['prod-platform', 'staging-platform', 'sandbox-dev', 'data-analytics', 'examplecorp-prod-' || a,
      'team-' || a])[1 + a % 6] AS account_name,
    (['prod', 'staging', 'dev'])[1 + r % 3] AS env,
    ((i * 7919 + r * 104729) % 20000003) / 1000000.0 AS cost
  FROM base
), typed AS (
  SELECT *,
    CASE WHEN service IN ('AmazonEC2', 'AmazonSageMaker') THEN {aws_types}[1 + (r // 21) % 7]
         WHEN service = 'Compute Engine' THEN {gcp_types}[1 + (r // 21) % 5] END AS it
  FROM resource
)
SELECT
  CASE WHEN gcp THEN 'Google Cloud' ELSE 'AWS' END AS ProviderName,
  CASE WHEN gcp THEN 'Google' ELSE 'AWS' END AS PublisherName,
  CASE WHEN gcp THEN 'Google Cloud' ELSE 'AWS' END AS InvoiceIssuerName,
  'INV-' || CASE WHEN gcp THEN 'G' ELSE 'A' END || CASE WHEN late THEN '-2026-04-' ELSE '-2026-05-' END
    || (a % 2)::VARCHAR AS InvoiceId,
  '10000000000' || (a % 2)::VARCHAR AS BillingAccountId, 'payer' AS BillingAccountName, 'Payer' AS BillingAccountType,
  '2000000' || lpad(a::VARCHAR, 5, '0') AS SubAccountId, account_name AS SubAccountName,
  'Linked Account' AS SubAccountType,
  CASE WHEN late THEN TIMESTAMP '2026-04-01' ELSE TIMESTAMP '2026-05-01' END AS BillingPeriodStart,
  CASE WHEN late THEN TIMESTAMP '2026-05-01' ELSE TIMESTAMP '2026-06-01' END AS BillingPeriodEnd,
  CASE WHEN late THEN TIMESTAMP '2026-04-01' + to_hours((h % 720)::BIGINT)
       ELSE TIMESTAMP '2026-05-01' + to_hours(h::BIGINT) END AS ChargePeriodStart,
  CASE WHEN late THEN TIMESTAMP '2026-04-01' + to_hours((h % 720 + 1)::BIGINT)
       ELSE TIMESTAMP '2026-05-01' + to_hours((h + 1)::BIGINT) END AS ChargePeriodEnd,
  CASE WHEN i % 1000 = 0 THEN 'Purchase' WHEN i % 997 = 0 THEN 'Tax' ELSE 'Usage' END AS ChargeCategory,
  NULL::VARCHAR AS ChargeClass, service || ' usage' AS ChargeDescription, 'Usage-Based' AS ChargeFrequency,
  cost::DECIMAL(38, 10) AS BilledCost,
  CASE WHEN r % 7 = 0 THEN cost * 0.6 ELSE cost END::DECIMAL(38, 10) AS EffectiveCost,
  (cost * 1.25)::DECIMAL(38, 10) AS ListCost, cost::DECIMAL(38, 10) AS ContractedCost,
  NULL::DECIMAL(38, 10) AS ListUnitPrice, NULL::DECIMAL(38, 10) AS ContractedUnitPrice,
  CASE WHEN r % 7 = 0 THEN 'Committed' WHEN r % 11 = 0 THEN 'Dynamic' ELSE 'Standard' END AS PricingCategory,
  1::DECIMAL(38, 10) AS PricingQuantity, 'Hours' AS PricingUnit, 'USD' AS PricingCurrency,
  NULL::DECIMAL(38, 10) AS PricingCurrencyContractedUnitPrice, NULL::DECIMAL(38, 10) AS PricingCurrencyEffectiveCost,
  NULL::DECIMAL(38, 10) AS PricingCurrencyListUnitPrice, 'USD' AS BillingCurrency,
  1::DECIMAL(38, 10) AS ConsumedQuantity, CASE WHEN it IS NULL THEN 'GB-Mo' ELSE 'Hours' END AS ConsumedUnit,
  service AS ServiceName, 'Compute' AS ServiceCategory, NULL::VARCHAR AS ServiceSubcategory,
  'SKU-' || (r % 97)::VARCHAR AS SkuId, NULL::VARCHAR AS SkuMeter, 'PRICE-' || (r % 389)::VARCHAR AS SkuPriceId,
  NULL::VARCHAR AS SkuPriceDetails, 'res-' || r::VARCHAR AS ResourceId, 'res-' || r::VARCHAR AS ResourceName,
  'Instance' AS ResourceType,
  (['us-east-1', 'us-west-2', 'eu-west-1', 'us-central1', 'europe-west4', 'asia-southeast1'])[1 + r % 6] AS RegionId,
  NULL::VARCHAR AS RegionName, NULL::VARCHAR AS AvailabilityZone,
  CASE WHEN r % 7 = 0 THEN 'commit-' || (r % 5)::VARCHAR END AS CommitmentDiscountId,
  NULL::VARCHAR AS CommitmentDiscountName, NULL::VARCHAR AS CommitmentDiscountCategory,
  NULL::VARCHAR AS CommitmentDiscountType,
  CASE WHEN r % 7 = 0 THEN CASE WHEN i % 10 = 0 THEN 'Unused' ELSE 'Used' END END AS CommitmentDiscountStatus,
  NULL::DECIMAL(38, 10) AS CommitmentDiscountQuantity, NULL::VARCHAR AS CommitmentDiscountUnit,
  NULL::VARCHAR AS CapacityReservationId, NULL::VARCHAR AS CapacityReservationStatus,
  '{{"Owner":"team-' || (['platform', 'payments', 'search', 'ml', 'data'])[1 + r % 5] || '","Environment":"'
    || env || '","CostCenter":"cc-' || (1000 + r % 50)::VARCHAR || '","Name":"res-' || r::VARCHAR || '"}}' AS Tags,
  it AS x_InstanceType,
  CASE WHEN NOT gcp THEN {models} END AS x_GpuModel,
  CASE WHEN NOT gcp THEN {gpus} END::INTEGER AS x_GpuCount,
  CASE WHEN NOT gcp THEN {gpus} END::DECIMAL(38, 10) AS x_GpuHours,
  CASE WHEN r % 11 = 0 THEN 'spot' WHEN r % 7 = 0 THEN 'reserved' ELSE 'on-demand' END AS x_PurchaseOption
FROM typed
) TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 122880)
"""


def fleet_bill_sql(path: Path, *, rows: int, resources: int) -> str:
    """The DuckDB statement writing the fleet bill of ``rows`` charges from ``resources`` resources to ``path``."""
    return _SQL.format(path=str(path).replace("'", "''"), rows=int(rows), resources=int(resources),
                       accounts=max(20, resources // 50), aws=_AWS, gcp=_GCP, aws_types=_AWS_TYPES,
                       gcp_types=_GCP_TYPES, models=_MODELS, gpus=_GPUS)
