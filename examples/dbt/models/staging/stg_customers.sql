select
    customer_id,
    trim(name) as customer_name,
    upper(country) as country_code
from {{ source('shop', 'customers') }}
