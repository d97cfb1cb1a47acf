base:
  '*':
    - common
  'gold*':
    - globbed
  'other*':
    - never
  'golden,other':
    - match: list
    - listed
  'a,b':
    - match: list
    - never
  'roles:web':
    - match: grain
    - grain_role
  'os_family:RedHat':
    - match: grain
    - never
  'roles:w*':
    - match: grain
    - grain_glob
  '^gold(en)?$':
    - match: pcre
    - pcred
  'G@roles:db and golden':
    - match: compound
    - compound_and
  'G@roles:db and not golden':
    - match: compound
    - never
  'P@env_tier:pro.* or L@x,y':
    - match: compound
    - compound_pcre_grain
  'E@^gol and ( G@os_family:Debian or G@os_family:Suse )':
    - match: compound
    - compound_paren
  'golden':
    - common
    - exact
  '[fgh]olden':
    - match: glob
    - explicit_glob
