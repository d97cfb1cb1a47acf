#!/bin/sh
echo "config.port={{ config.port if config is defined else 'UNDEF' }} flag={{ flag if flag is defined else 'UNDEF' }}"
echo "shadow={{ shadow if shadow is defined else 'UNDEF' }} d={{ d if d is defined else 'UNDEF' }} dd={{ dd if dd is defined else 'UNDEF' }} kd={{ kd if kd is defined else 'UNDEF' }}"
echo "name={{ name if name is defined else 'UNDEF' }} source={{ source if source is defined else 'UNDEF' }} saltenv={{ saltenv if saltenv is defined else 'UNDEF' }}"
echo "cwd={{ cwd if cwd is defined else 'UNDEF' }} args={{ args if args is defined else 'UNDEF' }} defaults={{ defaults if defaults is defined else 'UNDEF' }} context={{ context if context is defined else 'UNDEF' }}"
echo "sls={{ sls if sls is defined else 'UNDEF' }} tpldir={{ tpldir if tpldir is defined else 'UNDEF' }} env={{ env if env is defined else 'UNDEF' }}"
