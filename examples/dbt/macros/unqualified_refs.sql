{#- Models name their inputs without the database: dbt would write "warehouse"."main"."orders" into
    each view, but a merge reads every version under another alias (a snapshot is attached as its own
    database), so it accepts only views whose tables are unqualified or `main.<name>` (docs/DBT.md).
    The profile's search_path makes the attached database the one such names resolve in. -#}
{% macro ref() %}
  {%- do return(builtins.ref(*varargs, **kwargs).include(database=False)) -%}
{% endmacro %}

{% macro source() %}
  {%- do return(builtins.source(*varargs, **kwargs).include(database=False)) -%}
{% endmacro %}
