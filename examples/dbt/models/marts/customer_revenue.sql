-- A table (no primary key): merged whole into main, from the side that changed it.
select
    c.customer_id,
    c.customer_name,
    coalesce(n.country_name, c.country_code) as country,
    count(o.order_id) as orders,
    coalesce(sum(o.amount), 0) as revenue
from {{ ref('stg_customers') }} c
left join {{ ref('stg_orders') }} o using (customer_id)
left join {{ ref('country_names') }} n on n.country_code = c.country_code
group by all
