"""Distances and similarities: cosine_similarity, pairwise_distance, pdist, cdist."""

__all__ = []
