compound_pcre_grain-state:
  test.nop:
    - from: compound_pcre_grain
