select
    order_id,
    customer_id,
    ordered_on,
    amount_cents / 100.0 as amount,
    status
from {{ source('shop', 'orders') }}
where status <> 'cancelled'
