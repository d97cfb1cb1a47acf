{% set got = 'http://@HTTP@/hello.txt'|http_query %}
{% set canned = 'http://@HTTP@/hello.txt'|http_query(test=True) %}
{% set tested = 'http://@HTTP@/data.json'|http_query(test=True, test_url='http://@HTTP@/hello.txt', decode=True) %}
show:
  test.succeed_without_changes:
    - name: "{{ got.body|trim }} {{ canned }} {{ tested.get('test') }} {{ tested.dict.a }}"
