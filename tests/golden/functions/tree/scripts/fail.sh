#!/bin/sh
echo "failing with $1"
exit "${1#code}"
