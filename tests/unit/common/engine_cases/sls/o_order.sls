z_last:
  test.nop:
    - order: last
a_first:
  test.nop:
    - order: first
m_num:
  test.nop:
    - order: 5
m_num2:
  test.nop:
    - order: 2
plain1:
  test.nop: []
plain2:
  test.nop:
    - require:
      - test: z_late
z_late:
  test.nop:
    - order: 20000
names:
  test.nop:
    - names:
      - n3
      - n1
      - n2:
        - order: 3
