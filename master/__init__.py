"""master"""
