# median.awk: the median over lines "A B" of A / max(H, B) (-v h=H; default
# 0, so "A 1" lines give the median of A); 0 when no line has a divisor.
# bench/share.sh's and bench/ab.sh's paired ratios, one pair per round.
NF >= 2 {
    m = $2 > h ? $2 : h
    if (m > 0)
        r[++n] = $1 / m
}
END {
    for (i = 1; i <= n; i++)
        for (j = i + 1; j <= n; j++)
            if (r[j] < r[i]) { t = r[i]; r[i] = r[j]; r[j] = t }
    if (n == 0)
        print 0
    else if (n % 2)
        print r[(n + 1) / 2]
    else
        print (r[n / 2] + r[n / 2 + 1]) / 2
}
