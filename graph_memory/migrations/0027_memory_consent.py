# Issue 31, item 4: memory consent, the clients and cases a firm keeps out of the memory
# (graph_memory/models/consent.py).

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from graph_memory import conf


class Migration(migrations.Migration):

    dependencies = [
        ('graph_memory', '0026_instruction_like'),
        migrations.swappable_dependency(conf.firm_model_label()),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='MemoryExclusion',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('kind', models.CharField(choices=[('case', 'Case'), ('client', 'Client')], max_length=8)),
                ('ref_id', models.BigIntegerField(help_text="The host's id of the case or the client.")),
                ('reason', models.TextField(help_text="Why (the client's instruction, the engagement letter): for the record.")),
                ('excluded_at', models.DateTimeField(auto_now_add=True)),
                ('excluded_by', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('firm', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to=conf.firm_model_label())),
            ],
            options={
                'verbose_name': 'memory exclusion',
                'ordering': ['-excluded_at', '-id'],
                'constraints': [models.UniqueConstraint(fields=('firm', 'kind', 'ref_id'), name='gm_exclusion_unique')],
            },
        ),
        migrations.AlterField(
            model_name='accesschange',
            name='reason',
            field=models.CharField(choices=[('baseline', 'Standing when the ledger was installed'), ('granted', 'Granted'), ('revoked', 'Revoked'), ('joined', 'Joined the group'), ('left', 'Left the group'), ('created', 'Created'), ('deleted', 'Deleted'), ('moved', 'Moved to another firm'), ('deactivated', 'Deactivated'), ('reactivated', 'Reactivated'), ('consent', 'Memory consent')], max_length=16),
        ),
    ]
