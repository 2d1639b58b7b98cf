-- An incremental model with a contract: its primary key lets a merge match its rows one by one,
-- so main and a branch may both add days to it.
{{ config(
    materialized='incremental',
    unique_key='ordered_on',
    incremental_strategy='delete+insert',
    on_schema_change='fail'
) }}
select
    ordered_on,
    count(*) as orders,
    sum(amount) as revenue
from {{ ref('stg_orders') }}
{% if is_incremental() %}
where ordered_on >= (select coalesce(max(ordered_on), date '1970-01-01') from {{ this }})
{% endif %}
group by ordered_on
