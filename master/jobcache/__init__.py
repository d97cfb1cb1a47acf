"""The master's job cache: jobs, returns and events kept for ``jobs.*`` and the waiters.

``base`` holds the interface (:class:`~briny.master.jobcache.base.JobCache`) and its records;
``sql`` the SQL implementation both backends share, ``writer`` its batching writer thread and
``rows`` the rows it writes; ``sqlite`` and ``pg`` are the two backends.
"""
