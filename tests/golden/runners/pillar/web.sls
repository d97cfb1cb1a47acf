role: web
ports:
  - 80
  - 443
