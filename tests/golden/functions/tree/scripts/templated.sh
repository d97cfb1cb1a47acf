#!/bin/sh
echo "id {{ grains['id'] }} {{ pillar.get('missing', 'nopillar') }} {{ salt['grains.get']('id') }}"
