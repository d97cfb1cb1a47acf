# the ID's value is just "module.function", as in the requisites page
myservice:
  pkg.installed

curl: pkg.installed
