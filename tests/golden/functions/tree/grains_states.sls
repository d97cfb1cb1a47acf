cheese:
  grains.present:
    - value: edam

nested:
  grains.present:
    - name: apps:web:port
    - value: 8080

complex:
  grains.present:
    - value: [a, b]

complex_again:
  grains.present:
    - name: complex
    - value: [c]

complex_forced:
  grains.present:
    - name: complex
    - value: [c]
    - force: True

roles:
  grains.list_present:
    - value: web

roles_more:
  grains.list_present:
    - name: tiers
    - value: [web, db]

roles_same:
  grains.list_present:
    - name: tiers2
    - value: db

roles_drop:
  grains.list_absent:
    - name: dropme
    - value: [web, nope]

cheese_exists:
  grains.exists:
    - name: cheese

gone:
  grains.absent:
    - name: cheese

gone_for_good:
  grains.absent:
    - name: cheese
    - destructive: True

never_there:
  grains.absent:
    - name: nothere

not_a_list:
  grains.list_present:
    - name: apps:web:port
    - value: x

appended:
  grains.append:
    - name: appendme
    - value: b

appended_missing:
  grains.append:
    - name: nosuchgrain
    - value: b

later_template:
  file.managed:
    - name: @SANDBOX@/seen.txt
    - contents: "{{ salt['grains.get']('cheese', 'unset') }}"

