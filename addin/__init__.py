"""The xlwings add-in: Excel functions over the llm-finops core (see :mod:`addin.udfs`)."""
