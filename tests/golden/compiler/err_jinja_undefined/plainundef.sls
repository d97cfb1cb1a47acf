# an undefined name printed directly (not an attribute of it)
plain:
  test.nop:
    - value: "{{ missing_name }}"
    - dictmiss: "{{ grains['no_such_grain_key'] }}"
